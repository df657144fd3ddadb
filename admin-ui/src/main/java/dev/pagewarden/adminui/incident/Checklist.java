package dev.pagewarden.adminui.incident;

import dev.pagewarden.incident.disclosure.Disclosure;
import dev.pagewarden.incident.incident.FrozenBlastRadius;
import dev.pagewarden.incident.incident.Incident;

import java.util.ArrayList;
import java.util.List;

/**
 * What to do next on an incident, in order: contain (take the model private), scope (the blast radius frozen
 * with a published disclosure), disclose (a disclosure published), resolve. Each step is done or not by the
 * incident's state; the first one not done is the next, those after it wait.
 */
final class Checklist {
    enum Phase {
        CONTAIN("Contain"), SCOPE("Scope"), DISCLOSE("Disclose"), RESOLVE("Resolve");

        final String title;

        Phase(String title) {
            this.title = title;
        }
    }

    enum State {
        DONE, NEXT, LATER;

        public String label() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    /**
     * One step. {@code action} names how to do it: {@code href} is a link (to a control on this page or another
     * page); a {@code post} step is a form posting to {@code href}. Both null when done.
     */
    record Step(Phase phase, State state, String detail, String action, String href, boolean post) {
        public String title() {
            return phase.title;
        }

        public String id() {
            return "step-" + phase.name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    private Checklist() {
    }

    /** {@code versions}: the incident's disclosures, newest first. */
    static List<Step> of(Incident incident, boolean modelPrivate, boolean everPrivate, List<FrozenBlastRadius> frozen,
                         List<Disclosure> versions) {
        String base = "/admin/incidents/" + incident.id();
        Disclosure published = versions.stream().filter(d -> d.status() == Disclosure.Status.PUBLISHED).findFirst().orElse(null);
        Disclosure draft = versions.stream().filter(Disclosure::editable).findFirst().orElse(null);
        boolean resolved = incident.status() == Incident.Status.RESOLVED;

        List<Step> steps = new ArrayList<>();
        for (Phase p : Phase.values()) {
            Step s = switch (p) {
                case CONTAIN -> incident.model() == null
                        ? step(p, true, "No model named: there is nothing to take down.", null, null, false)
                        : modelPrivate ? step(p, true, "Model " + incident.model() + " is private: the tenant API answers 503.", null, null, false)
                        : everPrivate ? step(p, true, "Model " + incident.model() + " was made private and has been restored.", null, null, false)
                        : step(p, false, "Model " + incident.model() + " is still served.", "Make the model private", "#make-private", false);
                case SCOPE -> !frozen.isEmpty()
                        ? step(p, true, "Blast radius frozen and signed with disclosure " + frozen.getFirst().disclosureId() + ".", null, null, false)
                        : draft != null
                        ? step(p, false, "Check the blast radius below; it is frozen when the disclosure is published.",
                                "Open the draft disclosure", "/admin/disclosures/" + draft.id(), false)
                        : step(p, false, "Check the blast radius below; a disclosure draft starts from it and freezes it when published.",
                                "Draft disclosure", base + "/disclosure", true);
                case DISCLOSE -> published != null
                        ? step(p, true, "Version " + published.version() + " published; the affected tenants have their notices.", null, null, false)
                        : draft != null
                        ? step(p, false, "Version " + draft.version() + " is " + draft.status().label()
                                + ": a second person reviews it, a publisher publishes it.", "Review and publish", "/admin/disclosures/" + draft.id(), false)
                        : step(p, false, "No disclosure drafted yet.", "Draft disclosure", base + "/disclosure", true);
                case RESOLVE -> resolved
                        ? step(p, true, "Resolved.", null, null, false)
                        : step(p, false, "The incident is " + incident.status().label() + ".", "Mark resolved", "#to-resolved", false);
            };
            steps.add(s);
        }
        // the first step not done is the next one; later ones wait for it
        List<Step> out = new ArrayList<>();
        boolean nextGiven = false;
        for (Step s : steps) {
            if (s.state() == State.DONE) {
                out.add(s);
            } else {
                out.add(new Step(s.phase(), nextGiven ? State.LATER : State.NEXT, s.detail(), s.action(), s.href(), s.post()));
                nextGiven = true;
            }
        }
        return out;
    }

    private static Step step(Phase phase, boolean done, String detail, String action, String href, boolean post) {
        return new Step(phase, done ? State.DONE : State.LATER, detail, action, href, post);
    }
}
