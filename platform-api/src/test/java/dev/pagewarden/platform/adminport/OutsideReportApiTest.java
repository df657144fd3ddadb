package dev.pagewarden.platform.adminport;

import dev.pagewarden.adminui.users.AdminRole;
import dev.pagewarden.adminui.users.AdminUserService;
import dev.pagewarden.incident.incident.Incident;
import dev.pagewarden.incident.incident.IncidentService;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.HttpMethod;
import org.springframework.http.MediaType;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.util.LinkedMultiValueMap;
import org.springframework.web.reactive.function.BodyInserters;

import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The outside-report intake and the four-eyes rule over HTTP: security.txt; a JSON report that opens a
 * REPORTED incident and whose status page follows the incident; refusals (400 naming the field, 429 per
 * address); stored text escaped when shown; and a disclosure the admin token drafted, which the token can
 * neither review nor publish alone (403, 409, both audited) until another user has reviewed its current text.
 */
class OutsideReportApiTest extends ReportPlatformTest {
    @Autowired
    IncidentService incidents;
    @Autowired
    AdminUserService users;
    @Autowired
    JdbcClient jdbc;

    @Test
    void securityTxtFollowsRfc9116() {
        String txt = client().get().uri("/.well-known/security.txt").exchange().expectStatus().isOk()
                .expectHeader().contentTypeCompatibleWith(MediaType.TEXT_PLAIN)
                .expectBody(String.class).returnResult().getResponseBody();
        assertThat(txt).contains("Contact: https://llm.example.com/report\n").contains("Contact: mailto:security@example.com\n")
                .contains("Preferred-Languages: en, de\n")
                .contains("Canonical: https://llm.example.com/.well-known/security.txt\n");
        String expires = txt.lines().filter(l -> l.startsWith("Expires: ")).findFirst().orElseThrow().substring(9);
        Instant at = Instant.parse(expires); // RFC 3339, as RFC 9116 asks
        assertThat(at).isAfter(Instant.now().plus(Duration.ofDays(170))).isBefore(Instant.now().plus(Duration.ofDays(181)));
    }

    @Test
    void aReportOpensAReportedIncidentAndItsStatusFollows() {
        WebTestClient reporter = from("203.0.113.10");
        String[] solved = solvedChallenge(reporter);
        Map<String, Object> report = new HashMap<>(Map.of("contact", "researcher@example.org",
                "description", "A completion contained another customer's text: <script>alert(1)</script>",
                "request_ids", "cmpl-abc, cmpl-def", "window_from", "2026-11-30T10:00:00Z", "window_to", "2026-11-30T11:00:00Z",
                "challenge", solved[0], "nonce", solved[1]));
        Map<?, ?> ack = reporter.post().uri("/report").contentType(MediaType.APPLICATION_JSON).bodyValue(report).exchange()
                .expectStatus().isCreated().expectBody(Map.class).returnResult().getResponseBody();
        String token = (String) ack.get("token");
        assertThat(token).matches("pwr_[A-Za-z0-9_-]{43}");
        assertThat(ack.get("status")).isEqualTo("received");
        assertThat(status(reporter, token)).isEqualTo("received");
        reporter.get().uri("/report/" + token).exchange().expectStatus().isOk(); // no Accept header: one of the two answers

        // the incident: REPORTED, the reporter's window, the text in the admin UI escaped
        long id = jdbc.sql("SELECT incident_id FROM outside_reports WHERE contact = 'researcher@example.org'")
                .query(Long.class).single();
        Incident incident = incidents.get(id);
        assertThat(incident.status()).isEqualTo(Incident.Status.REPORTED);
        assertThat(incident.firstEvent()).isEqualTo(Instant.parse("2026-11-30T10:00:00Z"));
        users.create("rp-responder", PASSWORD, AdminRole.RESPONDER, "test");
        UiSession responder = new UiSession(baseUrl()).login("rp-responder", PASSWORD);
        assertThat(responder.get("/admin/incidents").getResponseBody()).contains("badge reported");
        String panel = responder.get("/admin/incidents/" + id + "/report").getResponseBody();
        assertThat(panel).contains("researcher@example.org").contains("cmpl-abc, cmpl-def")
                .contains("&lt;script&gt;alert(1)&lt;/script&gt;").doesNotContain("<script>alert");
        assertThat(jdbc.sql("SELECT count(*) FROM admin_audit WHERE action = 'report.received' AND target = :t")
                .param("t", "incident " + id).query(Long.class).single()).isEqualTo(1);

        // the same solved challenge opens no second report
        reporter.post().uri("/report").contentType(MediaType.APPLICATION_JSON).bodyValue(report).exchange()
                .expectStatus().isBadRequest().expectBody().jsonPath("$.error.param").isEqualTo("challenge")
                .jsonPath("$.error.message").value(m -> assertThat((String) m).contains("already been used"));

        // the reporter's page follows the incident, and tells nothing internal
        responder.get("/admin/incidents/" + id);
        responder.post("/admin/incidents/" + id + "/status", "status", "investigating");
        assertThat(status(reporter, token)).isEqualTo("under investigation");
        String page = reporter.get().uri("/report/" + token).accept(MediaType.TEXT_HTML).exchange().expectStatus().isOk()
                .expectBody(String.class).returnResult().getResponseBody();
        assertThat(page).contains("under investigation").doesNotContain("researcher@example.org").doesNotContain("Incident #");
        responder.get("/admin/incidents/" + id);
        responder.post("/admin/incidents/" + id + "/status", "status", "resolved");
        assertThat(status(reporter, token)).isEqualTo("closed");
        reporter.get().uri("/report/pwr_" + "A".repeat(43)).accept(MediaType.APPLICATION_JSON).exchange()
                .expectStatus().isNotFound().expectBody().jsonPath("$.error.code").isEqualTo("not_found");
    }

    @Test
    void badReportsAre400sNamingTheFieldAndTheFourthFromOneAddressIs429() {
        WebTestClient reporter = from("203.0.113.20");
        String[] solved = solvedChallenge(reporter);
        // 1: a nonce that does not solve it
        reporter.post().uri("/report").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("contact", "x@example.org", "description", "d", "challenge", solved[0], "nonce", "zz"))
                .exchange().expectStatus().isBadRequest().expectBody()
                .jsonPath("$.error.type").isEqualTo("invalid_request_error").jsonPath("$.error.param").isEqualTo("nonce");
        // 2: a description over the limit
        reporter.post().uri("/report").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("contact", "x@example.org", "description", "d".repeat(20_001), "challenge", solved[0],
                        "nonce", solved[1]))
                .exchange().expectStatus().isBadRequest().expectBody().jsonPath("$.error.param").isEqualTo("description");
        // 3: a form with half a window: the form again, the typed text escaped, the reason shown
        LinkedMultiValueMap<String, String> form = new LinkedMultiValueMap<>();
        form.add("contact", "\"><script>alert(2)</script>");
        form.add("description", "d");
        form.add("window_from", "2026-11-30T10:00:00Z");
        form.add("challenge", solved[0]);
        form.add("nonce", solved[1]);
        String page = reporter.post().uri("/report").contentType(MediaType.APPLICATION_FORM_URLENCODED)
                .body(BodyInserters.fromFormData(form)).exchange().expectStatus().isBadRequest()
                .expectBody(String.class).returnResult().getResponseBody();
        assertThat(page).contains("both ends of the time window").doesNotContain("<script>alert(2)")
                .contains("&quot;&gt;&lt;script&gt;");
        // 4: over the limit of three per hour, whatever it carries
        reporter.post().uri("/report").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("contact", "x@example.org", "description", "d", "challenge", solved[0], "nonce", solved[1]))
                .exchange().expectStatus().isEqualTo(429).expectHeader().exists("Retry-After").expectBody()
                .jsonPath("$.error.type").isEqualTo("rate_limit_error");
        // another address is not affected
        WebTestClient other = from("203.0.113.21");
        String[] fresh = solvedChallenge(other);
        other.post().uri("/report").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("contact", "y@example.org", "description", "d", "challenge", fresh[0], "nonce", fresh[1]))
                .exchange().expectStatus().isCreated();
    }

    @Test
    void oversizedBodiesAreRefusedBeforeTheyAreRead() {
        WebTestClient reporter = from("203.0.113.40");
        String huge = "d".repeat(300_000);
        reporter.post().uri("/report").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("contact", "x@example.org", "description", huge)).exchange()
                .expectStatus().isEqualTo(413).expectBody().jsonPath("$.error.message")
                .value(m -> assertThat((String) m).contains("too large"));
        LinkedMultiValueMap<String, String> form = new LinkedMultiValueMap<>();
        form.add("contact", "x@example.org");
        form.add("description", huge);
        reporter.post().uri("/report").contentType(MediaType.APPLICATION_FORM_URLENCODED)
                .body(BodyInserters.fromFormData(form)).exchange()
                .expectStatus().isEqualTo(413).expectBody(String.class).value(page -> assertThat(page).contains("too large"));
    }

    @Test
    @SuppressWarnings("unchecked")
    void theAdminTokenCannotReviewOrPublishItsOwnDraftAlone() {
        WebTestClient reporter = from("203.0.113.30");
        String[] solved = solvedChallenge(reporter);
        reporter.post().uri("/report").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("contact", "fe@example.org", "description", "four eyes", "challenge", solved[0],
                        "nonce", solved[1]))
                .exchange().expectStatus().isCreated();
        long incident = jdbc.sql("SELECT incident_id FROM outside_reports WHERE contact = 'fe@example.org'")
                .query(Long.class).single();

        Map<?, ?> draft = admin().post().uri("/admin/api/incidents/" + incident + "/disclosure").exchange()
                .expectStatus().isCreated().expectBody(Map.class).returnResult().getResponseBody();
        long id = ((Number) draft.get("id")).longValue();
        assertThat(draft.get("created_by")).isEqualTo("admin-token");
        assertThat((String) draft.get("body")).contains("suspected in a report from outside");
        assertThat(draft.get("four_eyes")).isEqualTo(true);
        admin().post().uri("/admin/api/disclosures/" + id + "/approve").exchange().expectStatus().isForbidden()
                .expectBody().jsonPath("$.error.code").isEqualTo("four_eyes_reviewer_is_author")
                .jsonPath("$.error.type").isEqualTo("invalid_request_error");
        admin().post().uri("/admin/api/disclosures/" + id + "/publish").exchange().expectStatus().isEqualTo(409)
                .expectBody().jsonPath("$.error.code").isEqualTo("four_eyes_review_required")
                .jsonPath("$.error.message").value(m -> assertThat((String) m).contains("admin-token"));
        assertThat(refusals(id)).isEqualTo(2);

        // the template's placeholders filled in (a version with any left is not approved), another person reviews
        // (through the UI); the token, its author, may then publish
        admin().put().uri("/admin/api/disclosures/" + id).contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("title", (String) draft.get("title"),
                        "body", ((String) draft.get("body")).replaceAll("_Describe[^_\\n]*_", "Filled in.")))
                .exchange().expectStatus().isOk();
        users.create("fe-reviewer", PASSWORD, AdminRole.RESPONDER, "test");
        UiSession reviewer = new UiSession(baseUrl()).login("fe-reviewer", PASSWORD);
        reviewer.get("/admin/disclosures/" + id);
        assertThat(reviewer.post("/admin/disclosures/" + id + "/approve").getStatus().is3xxRedirection()).isTrue();

        // an edit after the review needs a new one
        admin().put().uri("/admin/api/disclosures/" + id).contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("title", "Outside report: no exposure found", "body", "We found no exposure."))
                .exchange().expectStatus().isOk();
        admin().post().uri("/admin/api/disclosures/" + id + "/publish").exchange().expectStatus().isEqualTo(409);
        assertThat(refusals(id)).isEqualTo(3);
        reviewer.api(HttpMethod.POST, "/admin/api/disclosures/" + id + "/approve").exchange().expectStatus().isOk();
        Map<?, ?> published = admin().post().uri("/admin/api/disclosures/" + id + "/publish").exchange().expectStatus().isOk()
                .expectBody(Map.class).returnResult().getResponseBody();
        assertThat(published.get("status")).isEqualTo("published");
        assertThat(published.get("published_by")).isEqualTo("admin-token");
        List<Map<String, Object>> reviews = (List<Map<String, Object>>) published.get("reviews");
        assertThat(reviews).extracting(r -> r.get("reviewer")).containsExactly("fe-reviewer", "fe-reviewer");
        assertThat(reviews).extracting(r -> r.get("current")).containsExactly(false, true);
        assertThat(reviews).extracting(r -> r.get("version")).containsOnly(1);

        // a correction is a new version: drafted by the reviewer, who may now not review it
        long correction = ((Number) reviewer.api(HttpMethod.POST, "/admin/api/incidents/" + incident + "/disclosure")
                .exchange().expectStatus().isCreated().expectBody(Map.class).returnResult().getResponseBody().get("id")).longValue();
        reviewer.api(HttpMethod.POST, "/admin/api/disclosures/" + correction + "/approve").exchange().expectStatus().isForbidden();
        // and no user may take the token's name
        assertThat(users.findByName("admin-token")).isEmpty();
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> users.create("admin-token", PASSWORD, AdminRole.ADMIN, "test"))
                .hasMessageContaining("admin token");
    }

    private long refusals(long disclosure) {
        return jdbc.sql("SELECT count(*) FROM admin_audit WHERE action = 'disclosure.four_eyes_refused' AND target = :t")
                .param("t", "disclosure " + disclosure).query(Long.class).single();
    }

    private static String status(WebTestClient reporter, String token) {
        Map<?, ?> s = reporter.get().uri("/report/" + token).accept(MediaType.APPLICATION_JSON).exchange()
                .expectStatus().isOk().expectBody(Map.class).returnResult().getResponseBody();
        return (String) s.get("status");
    }
}
