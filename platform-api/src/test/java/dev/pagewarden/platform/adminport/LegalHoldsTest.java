package dev.pagewarden.platform.adminport;

import dev.pagewarden.adminui.users.AdminRole;
import dev.pagewarden.incident.disclosure.DisclosureService;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.HttpMethod;
import org.springframework.http.MediaType;

import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Legal holds through the admin API and the holds page (placing: responder, releasing: admin; each change in
 * the admin audit, bad input a 400 naming the field), and the incident page showing the signed blast radius
 * frozen with a published disclosure.
 */
class LegalHoldsTest extends AdminUiTest {
    @Autowired
    DisclosureService disclosures;

    LegalHoldsTest() {
        super("lh-");
    }

    @Test
    void holdsThroughTheAdminApi() {
        Map<?, ?> created = admin().post().uri("/admin/api/holds").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("from", "2026-03-01", "to", "2026-03-15T00:00:00Z", "reason", "regulator request 17"))
                .exchange().expectStatus().isCreated().expectBody(Map.class).returnResult().getResponseBody();
        Number id = (Number) created.get("id");
        admin().get().uri("/admin/api/holds").exchange().expectStatus().isOk().expectBody()
                .jsonPath("$.holds[?(@.id == " + id + ")].from").isEqualTo("2026-03-01T00:00:00Z")
                .jsonPath("$.holds[?(@.id == " + id + ")].active").isEqualTo(true);
        admin().delete().uri("/admin/api/holds/" + id).exchange().expectStatus().isOk().expectBody()
                .jsonPath("$.active").isEqualTo(false).jsonPath("$.released_by").isEqualTo("admin-token");
        admin().delete().uri("/admin/api/holds/" + id).exchange().expectStatus().isBadRequest().expectBody()
                .jsonPath("$.error.message").value(m -> assertThat((String) m).contains("already released"));
        admin().delete().uri("/admin/api/holds/987654").exchange().expectStatus().isNotFound();
        assertThat(jdbc.sql("SELECT action FROM admin_audit WHERE target = :t ORDER BY id").param("t", "legal hold " + id)
                .query(String.class).list()).containsExactly("legal-hold.add", "legal-hold.release");

        for (var bad : List.of(
                List.of(Map.of("from", "2026-03-15", "to", "2026-03-01", "reason", "x"), "to", "must be after from"),
                List.of(Map.of("from", "2026-03-01", "to", "2026-03-15"), "reason", "reason is required"),
                List.of(Map.of("to", "2026-03-15", "reason", "x"), "from", "from is required"),
                List.of(Map.of("from", "last week", "to", "2026-03-15", "reason", "x"), "from", "ISO-8601"),
                List.of(Map.of("from", 5, "to", "2026-03-15", "reason", "x"), "from", "must be a string"),
                List.of(Map.of("from", "2026-03-01", "to", "2026-03-15", "reason", "x", "until", "y"), "until", "Unrecognized"))) {
            admin().post().uri("/admin/api/holds").contentType(MediaType.APPLICATION_JSON).bodyValue(bad.get(0))
                    .exchange().expectStatus().isBadRequest().expectBody()
                    .jsonPath("$.error.param").isEqualTo(bad.get(1))
                    .jsonPath("$.error.message").value(m -> assertThat((String) m).contains((String) bad.get(2)));
        }
        // a viewer reads, but neither places nor releases
        UiSession viewer = as(AdminRole.VIEWER);
        viewer.get("/admin/holds");
        viewer.api(HttpMethod.GET, "/admin/api/holds").exchange().expectStatus().isOk();
        viewer.api(HttpMethod.POST, "/admin/api/holds").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("from", "2026-03-01", "to", "2026-03-15", "reason", "x")).exchange().expectStatus().isForbidden();
    }

    @Test
    void holdsPageRespondersPlaceAdminsRelease() {
        UiSession responder = as(AdminRole.RESPONDER);
        responder.get("/admin/holds");
        var bad = responder.post("/admin/holds", "from", "2026-04-10", "to", "2026-04-01", "reason", "case 9");
        assertThat(bad.getStatus().value()).isEqualTo(400);
        assertThat(bad.getResponseBody()).contains("must be after from");
        var placed = responder.post("/admin/holds", "from", "2026-04-01", "to", "2026-04-10", "reason", "case 9 page");
        assertThat(placed.getStatus().value()).isEqualTo(200);
        assertThat(placed.getResponseBody()).contains("hold placed").contains("case 9 page");
        long id = jdbc.sql("SELECT id FROM legal_holds WHERE reason = 'case 9 page'").query(Long.class).single();
        responder.get("/admin/holds");
        assertThat(responder.post("/admin/holds/" + id + "/release").getStatus().value()).isEqualTo(403);
        UiSession admin = as(AdminRole.ADMIN);
        assertThat(admin.get("/admin/holds").getResponseBody()).contains("/admin/holds/" + id + "/release");
        assertThat(admin.post("/admin/holds/" + id + "/release").getResponseBody()).contains("hold " + id + " released");
        assertThat(jdbc.sql("SELECT actor || ' ' || action FROM admin_audit WHERE target = :t ORDER BY id")
                .param("t", "legal hold " + id).query(String.class).list())
                .containsExactly("lh-responder legal-hold.add", "lh-admin legal-hold.release");
    }

    @Test
    void incidentPageShowsTheSignedFrozenBlastRadius() {
        long incident = incident();
        var draft = disclosures.draft(incident, "lh-responder");
        long version = draft.id();
        disclosures.edit(version, draft.title(), draft.body().replaceAll("_Describe[^_\n]*_", "Filled in."), "lh-responder");
        disclosures.submitForReview(version, "lh-responder");
        disclosures.approve(version, "lh-publisher");
        disclosures.publish(version, "lh-publisher");
        String page = as(AdminRole.VIEWER).get("/admin/incidents/" + incident).getResponseBody();
        assertThat(page).contains("id=\"frozen-" + version + "\"").contains("signature verifies")
                .contains("Blast radius (recomputed now)");
    }
}
