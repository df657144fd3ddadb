package dev.pagewarden.adminui.incident;

import dev.pagewarden.incident.disclosure.Disclosure;
import dev.pagewarden.incident.incident.FrozenBlastRadius;
import dev.pagewarden.incident.incident.Incident;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class ChecklistTest {
    private static final Instant T = Instant.parse("2026-11-30T19:36:10Z");

    private static Incident incident(Incident.Status status) {
        return new Incident(7, "lineage-exposure", "stories260K", "node-a", "prefill-0", status, "CRITICAL", T, T, T, null, 1, null);
    }

    private static Disclosure disclosure(Disclosure.Status status) {
        return new Disclosure(11, 7, 1, status, "t", "b", T, "r", null, null, null);
    }

    private static FrozenBlastRadius frozen() {
        return new FrozenBlastRadius(11, 7, T, T, "stories260K", null, null, T, "", "", "k", true, List.of(), List.of(), List.of());
    }

    private static List<Checklist.State> states(List<Checklist.Step> steps) {
        return steps.stream().map(Checklist.Step::state).toList();
    }

    @Test
    void aFreshIncidentStartsWithContainment() {
        List<Checklist.Step> steps = Checklist.of(incident(Incident.Status.INVESTIGATING), false, false, List.of(), List.of());
        assertThat(steps).extracting(Checklist.Step::phase).containsExactly(Checklist.Phase.values());
        assertThat(states(steps)).containsExactly(Checklist.State.NEXT, Checklist.State.LATER, Checklist.State.LATER,
                Checklist.State.LATER);
        assertThat(steps.getFirst().href()).isEqualTo("#make-private");
        assertThat(steps.get(1).post()).isTrue();
        assertThat(steps.get(1).href()).isEqualTo("/admin/incidents/7/disclosure");
    }

    @Test
    void privateModelAndADraftMakeScopingNextWithALinkToTheDraft() {
        List<Checklist.Step> steps = Checklist.of(incident(Incident.Status.MITIGATED), true, true, List.of(),
                List.of(disclosure(Disclosure.Status.IN_REVIEW)));
        assertThat(states(steps)).containsExactly(Checklist.State.DONE, Checklist.State.NEXT, Checklist.State.LATER,
                Checklist.State.LATER);
        assertThat(steps.get(1).href()).isEqualTo("/admin/disclosures/11");
        assertThat(steps.get(2).detail()).contains("in review");
    }

    @Test
    void publishedAndFrozenLeavesResolving() {
        List<Checklist.Step> steps = Checklist.of(incident(Incident.Status.MITIGATED), false, true, List.of(frozen()),
                List.of(disclosure(Disclosure.Status.PUBLISHED)));
        assertThat(states(steps)).containsExactly(Checklist.State.DONE, Checklist.State.DONE, Checklist.State.DONE,
                Checklist.State.NEXT);
        assertThat(steps.getFirst().detail()).contains("restored");
        assertThat(steps.getLast().href()).isEqualTo("#to-resolved");
    }

    @Test
    void resolvedIsAllDone() {
        assertThat(states(Checklist.of(incident(Incident.Status.RESOLVED), true, true, List.of(frozen()),
                List.of(disclosure(Disclosure.Status.PUBLISHED))))).containsOnly(Checklist.State.DONE);
    }
}
