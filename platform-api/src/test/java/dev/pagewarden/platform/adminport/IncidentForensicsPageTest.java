package dev.pagewarden.platform.adminport;

import dev.pagewarden.adminui.users.AdminRole;
import dev.pagewarden.adminui.users.AdminUserService;
import dev.pagewarden.db.audit.BlastRadius;
import dev.pagewarden.db.audit.Exposure;
import dev.pagewarden.incident.incident.Incident;
import dev.pagewarden.incident.incident.IncidentService;
import dev.pagewarden.platform.testing.PlatformTestBase;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.HttpMethod;
import org.springframework.http.MediaType;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.context.TestPropertySource;

import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The incident page of a replayed 2026 incident: its summary strip says what the blast radius says, it names
 * tenants and responses, draws one bar per minute with exposed reads and one matrix cell per reader and exposed
 * tenant pair, and its checklist follows the incident from containment on.
 */
@TestPropertySource(properties = {"pagewarden.lab.enabled=true",
        "pagewarden.lab.faults=skip-capacity-check,legacy-finished-check,detectors-off",
        "pagewarden.engine.context-window=320", "pagewarden.engine.prefill-pool-tokens=192",
        "pagewarden.engine.decode-pool-tokens=1024", "pagewarden.admin.lineage-sweep=0s"})
class IncidentForensicsPageTest extends PlatformTestBase {
    private static final Path HOME = tempHome();
    private static final String PASSWORD = "correct-horse-battery";
    private static final String PUBLIC_ID = "Zq3VnT0aB1cD2eF3gH4iJ5kL";

    @Autowired
    AdminUserService users;
    @Autowired
    IncidentService incidents;
    @Autowired
    JdbcClient jdbc;

    @DynamicPropertySource
    static void home(DynamicPropertyRegistry registry) {
        registry.add("pagewarden.home", HOME::toString);
    }

    private static List<Integer> dataReads(String page, String element) {
        Matcher m = Pattern.compile("<" + element + " class=\"" + "[a-z-]+\" data-reads=\"(\\d+)\"").matcher(page);
        List<Integer> out = new ArrayList<>();
        while (m.find()) {
            out.add(Integer.parseInt(m.group(1)));
        }
        return out;
    }

    private static String stepClass(String page, String step) {
        Matcher m = Pattern.compile("<li id=\"step-" + step + "\" class=\"([a-z]+)\"").matcher(page);
        assertThat(m.find()).as("checklist step " + step).isTrue();
        return m.group(1);
    }

    @Test
    @SuppressWarnings("unchecked")
    void summaryNamesChartsAndChecklistFollowTheBlastRadius() {
        users.create("forensics1", PASSWORD, AdminRole.RESPONDER, "test");
        UiSession responder = new UiSession(baseUrl()).login("forensics1", PASSWORD);
        Map<String, Object> out = responder.api(HttpMethod.POST, "/admin/api/lab/replay").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("scenario", "incident-2026-undetected")).exchange().expectStatus().isOk()
                .expectBody(Map.class).returnResult().getResponseBody();
        long id = ((List<Number>) out.get("incidents_filed_by_lineage_sweep")).getFirst().longValue();
        Incident incident = incidents.get(id);
        BlastRadius radius = incidents.blastRadius(incident);
        assertThat(radius.affectedResponses()).isPositive();
        Set<Long> readers = radius.responses().stream().map(BlastRadius.AffectedResponse::readerRequest).collect(Collectors.toSet());
        List<Exposure> exposures = incidents.exposures(incident).stream().filter(e -> readers.contains(e.readerRequest())).toList();
        long reader = radius.responses().getFirst().readerRequest();
        // lab replays give no tenant-visible ids: give one response the id a tenant would have been given
        assertThat(jdbc.sql("UPDATE requests SET public_id = :p, public_prefix = 'chatcmpl-' WHERE id = :id").param("p", PUBLIC_ID).param("id", reader)
                .update()).isEqualTo(1);
        Map<String, String> names = jdbc.sql("SELECT id, display_name FROM tenants").query((rs, i) -> Map.entry(rs.getString(1),
                rs.getString(2))).list().stream().collect(Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue));

        String page = responder.get("/admin/incidents/" + id).getResponseBody();
        // the summary strip: the blast radius's counts, and the exposed reads behind them
        assertThat(page).contains("id=\"sum-responses\">" + radius.affectedResponses() + "<")
                .contains("id=\"sum-readers\">" + radius.readerTenants().size() + "<")
                .contains("id=\"sum-exposed\">" + radius.exposedTenants().size() + "<")
                .contains("id=\"sum-reads\">" + exposures.size() + "<")
                .contains("<time datetime=\"" + exposures.stream().map(Exposure::readAt).min(Instant::compareTo).orElseThrow() + "\"")
                .contains("model still served");
        // names, with the ids on hover; the response id beside the engine's
        for (String t : radius.readerTenants()) {
            assertThat(names).containsKey(t);
            assertThat(page).contains("title=\"" + t + "\">" + names.get(t));
        }
        assertThat(page).contains(">chatcmpl-" + PUBLIC_ID + "<").doesNotContain("…cmpl-" + PUBLIC_ID);
        // one bar per minute with exposed reads (the replay takes well under the 90 minutes that widen the buckets)
        long minutes = exposures.stream().map(e -> e.readAt().truncatedTo(ChronoUnit.MINUTES)).distinct().count();
        List<Integer> bars = dataReads(page, "rect");
        assertThat(bars).hasSize((int) minutes);
        assertThat(bars.stream().mapToInt(Integer::intValue).sum()).isEqualTo(exposures.size());
        assertThat(page).contains("<g class=\"marker detector\">");
        // one matrix cell per reader x exposed tenant, filled where the pair has exposed reads
        long pairs = exposures.stream().map(e -> e.readerTenant() + "\n" + e.exposedTenant()).distinct().count();
        Set<String> exposedTenants = exposures.stream().map(Exposure::exposedTenant).collect(Collectors.toSet());
        Set<String> readerTenants = exposures.stream().map(Exposure::readerTenant).collect(Collectors.toSet());
        List<Integer> cells = dataReads(page, "g");
        assertThat(cells).hasSize(readerTenants.size() * exposedTenants.size());
        assertThat(cells.stream().filter(n -> n > 0).count()).isEqualTo(pairs);
        assertThat(cells.stream().mapToInt(Integer::intValue).sum()).isEqualTo(exposures.size());
        // the checklist starts at containment
        assertThat(stepClass(page, "contain")).isEqualTo("next");
        assertThat(stepClass(page, "scope")).isEqualTo("later");

        responder.post("/admin/incidents/" + id + "/model-private");
        page = responder.get("/admin/incidents/" + id).getResponseBody();
        assertThat(page).contains("model private since").doesNotContain("model still served")
                .contains("<g class=\"marker action\">");
        assertThat(stepClass(page, "contain")).isEqualTo("done");
        assertThat(stepClass(page, "scope")).isEqualTo("next");
        assertThat(stepClass(page, "disclose")).isEqualTo("later");

        // the request page names the tenant and shows the id the tenant was given
        String request = responder.get("/admin/audit/requests/" + reader).getResponseBody();
        String readerTenant = radius.responses().getFirst().readerTenant();
        assertThat(request).contains("id=\"response-id\"").contains("chatcmpl-" + PUBLIC_ID)
                .contains(names.get(readerTenant) + " (" + readerTenant + ")");
        assertThat(responder.get("/admin/audit/requests/cmpl-" + PUBLIC_ID).getStatus().value()).isEqualTo(200);
    }
}
