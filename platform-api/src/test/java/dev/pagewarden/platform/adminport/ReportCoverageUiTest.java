package dev.pagewarden.platform.adminport;

import dev.pagewarden.adminui.users.AdminRole;
import dev.pagewarden.adminui.users.AdminUserService;
import dev.pagewarden.incident.incident.Incident;
import dev.pagewarden.incident.incident.IncidentService;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.MediaType;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.test.web.reactive.server.WebTestClient;

import java.sql.Timestamp;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The report panel over HTTP: an outside report naming a response another incident's blast radius covers links
 * that incident and offers the merge into it to admins only; a named id nothing covers is listed as such; the
 * merge closes the reported incident pointing at the covering one, audited, noted on the covering incident.
 */
class ReportCoverageUiTest extends ReportPlatformTest {
    private static final String NODE = "report-coverage-node";
    /** The engine-start prefix of the lineage rows below (an event id's top 24 bits). */
    private static final long PREFIX = 0x5A17E5L << 40;

    @Autowired
    IncidentService incidents;
    @Autowired
    AdminUserService users;
    @Autowired
    JdbcClient jdbc;

    @Test
    void aReportNamingACoveredResponseLinksItsIncidentAndMergesIntoIt() {
        // 9001 (rc-globex) wrote page 3 of epoch 1; 9002 (rc-initech) got the page in epoch 2 and read all sixteen slots
        Instant read = Instant.now().truncatedTo(ChronoUnit.MICROS).minusSeconds(30);
        jdbc.sql("INSERT INTO tenants (id, display_name) VALUES ('rc-globex', 'Globex'), ('rc-initech', 'Initech')"
                + " ON CONFLICT DO NOTHING").update();
        lineage(1, read.minusSeconds(2), 1, 1, 9001, "rc-globex");
        lineage(2, read, 5, 2, 9002, "rc-initech");
        long a = incidents.file(new IncidentService.Signal("checksum-mismatch", "CRITICAL", NODE, "decode-0", 9002,
                "rc-initech", List.of(3), read.plusSeconds(1), "detected"));
        String model = incidents.get(a).model() == null ? "any" : incidents.get(a).model();
        for (long id = 9001; id <= 9003; id++) {
            jdbc.sql("INSERT INTO requests (id, tenant_id, model, prompt_tokens, generated_tokens, status, received_at, public_id)"
                    + " VALUES (:id, :t, :m, 16, 1, 'FINISHED', :at, :p)").param("id", id)
                    .param("t", id == 9002 ? "rc-initech" : "rc-globex").param("m", model)
                    .param("at", Timestamp.from(read.minusSeconds(5))).param("p", publicId(id)).update();
        }

        users.create("rc-admin", PASSWORD, AdminRole.ADMIN, "test");
        users.create("rc-responder", PASSWORD, AdminRole.RESPONDER, "test");
        UiSession admin = new UiSession(baseUrl()).login("rc-admin", PASSWORD);
        UiSession responder = new UiSession(baseUrl()).login("rc-responder", PASSWORD);

        // the covering incident's header gives when the exposure happened: the exposed read, not the detector's event
        assertThat(admin.get("/admin/incidents/" + a).getResponseBody())
                .contains("<strong id=\"exposure-first\"><time datetime=\"" + read + "\"")
                .contains("<strong id=\"exposure-last\"><time datetime=\"" + read + "\"");

        WebTestClient reporter = from("203.0.113.60");
        String[] solved = solvedChallenge(reporter);
        reporter.post().uri("/report").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("contact", "coverage@example.org", "description", "I saw someone else's text",
                        "request_ids", "chatcmpl-" + publicId(9002) + ", cmpl-" + publicId(9003), "challenge", solved[0],
                        "nonce", solved[1]))
                .exchange().expectStatus().isCreated();
        long reported = jdbc.sql("SELECT incident_id FROM outside_reports WHERE contact = 'coverage@example.org'")
                .query(Long.class).single();

        String panel = admin.get("/admin/incidents/" + reported + "/report").getResponseBody();
        assertThat(panel).contains("href=\"/admin/incidents/" + a + "\"").contains("incident #" + a)
                .contains("chatcmpl-" + publicId(9002)).contains("9002")
                .contains("not covered by any incident").contains("id=\"merge-into-" + a + "\"");
        assertThat(responder.get("/admin/incidents/" + reported + "/report").getResponseBody())
                .contains("href=\"/admin/incidents/" + a + "\"").doesNotContain("merge-into-");

        // a responder may not merge; an admin may
        responder.get("/admin/incidents/" + reported);
        assertThat(responder.post("/admin/incidents/" + reported + "/merge", "into", Long.toString(a)).getStatus().value())
                .isEqualTo(403);
        assertThat(incidents.get(reported).merged()).isFalse();
        admin.get("/admin/incidents/" + reported);
        var merged = admin.post("/admin/incidents/" + reported + "/merge", "into", Long.toString(a));
        assertThat(merged.getStatus().is3xxRedirection()).isTrue();
        assertThat(UiSession.location(merged)).endsWith("/admin/incidents/" + reported);

        Incident closed = incidents.get(reported);
        assertThat(closed.status()).isEqualTo(Incident.Status.RESOLVED);
        assertThat(closed.mergedInto()).isEqualTo(a);
        assertThat(jdbc.sql("SELECT count(*) FROM admin_audit WHERE actor = 'rc-admin' AND action = 'incident.merge'"
                + " AND target = :t AND details = :d").param("t", "incident " + reported).param("d", "into incident " + a)
                .query(Long.class).single()).isEqualTo(1);
        assertThat(incidents.timeline(a)).anySatisfy(e -> {
            assertThat(e.actor()).isEqualTo("rc-admin");
            assertThat(e.text()).contains("incident " + reported + " merged into this one").contains(publicId(9002));
        });
        assertThat(admin.get("/admin/incidents/" + reported + "/report").getResponseBody())
                .contains("id=\"merged-into\"").contains("href=\"/admin/incidents/" + a + "\"").doesNotContain("merge-into-");
    }

    /** One lineage row on page 3 of {@value #NODE}/decode-0: kind 1 (WRITE) or 5 (BIND_READ), slots 0-16. */
    private void lineage(long seq, Instant at, int kind, long epoch, long request, String tenant) {
        jdbc.sql("""
                INSERT INTO kv_lineage (event_id, event_time, kind, node, worker, page, epoch, request_id, tenant_id, slot_from,
                  slot_to, peer_worker, peer_page, peer_epoch, generation, checksum, ok)
                VALUES (:id, :at, :kind, :node, 'decode-0', 3, :epoch, :req, :tenant, 0, 16, NULL, -1, -1, 0, 0, true)""")
                .param("id", PREFIX | seq).param("at", Timestamp.from(at)).param("kind", kind).param("node", NODE)
                .param("epoch", epoch).param("req", request).param("tenant", tenant).update();
    }

    /** A tenant-facing id: 24 base62 characters. */
    private static String publicId(long request) {
        return "rc" + request + "q".repeat(24 - 2 - Long.toString(request).length());
    }
}
