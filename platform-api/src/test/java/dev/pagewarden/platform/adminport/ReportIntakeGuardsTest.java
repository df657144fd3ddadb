package dev.pagewarden.platform.adminport;

import org.junit.jupiter.api.Test;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.util.LinkedMultiValueMap;
import org.springframework.web.reactive.function.BodyInserters;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The report intake against the levers of an outside attacker: a page of another site posting the form for its
 * visitors, a challenge solved on one machine and spent from another, and the many addresses of one IPv6 network.
 */
class ReportIntakeGuardsTest extends ReportPlatformTest {

    @Test
    void crossSitePostsAreRefused() {
        WebTestClient reporter = from("203.0.113.60");
        String[] solved = solvedChallenge(reporter);
        LinkedMultiValueMap<String, String> form = new LinkedMultiValueMap<>();
        form.add("contact", "x@example.org");
        form.add("description", "from a page elsewhere");
        form.add("challenge", solved[0]);
        form.add("nonce", solved[1]);
        String page = reporter.post().uri("/report").header("Origin", "https://evil.example")
                .contentType(MediaType.APPLICATION_FORM_URLENCODED).body(BodyInserters.fromFormData(form)).exchange()
                .expectStatus().isForbidden().expectBody(String.class).returnResult().getResponseBody();
        assertThat(page).contains("own form, or from a client");
        reporter.post().uri("/report").header("Sec-Fetch-Site", "cross-site")
                .contentType(MediaType.APPLICATION_FORM_URLENCODED).body(BodyInserters.fromFormData(form)).exchange()
                .expectStatus().isForbidden();
        reporter.post().uri("/report").header("Origin", "https://evil.example").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("contact", "x@example.org", "description", "d", "challenge", solved[0], "nonce", solved[1]))
                .exchange().expectStatus().isForbidden().expectBody().jsonPath("$.error.code").isEqualTo("cross_site_report");
        // the platform's own public origin may post
        reporter.post().uri("/report").header("Origin", "https://llm.example.com").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("contact", "x@example.org", "description", "d", "challenge", solved[0], "nonce", solved[1]))
                .exchange().expectStatus().isCreated();
    }

    @Test
    void aPostWithTheOpaqueOriginIsJudgedByItsFetchSite() {
        // pages with a no-referrer policy (the platform's own form among them) post with Origin: null
        WebTestClient reporter = from("203.0.113.61");
        String[] solved = solvedChallenge(reporter);
        Map<String, String> body = Map.of("contact", "x@example.org", "description", "d", "challenge", solved[0],
                "nonce", solved[1]);
        reporter.post().uri("/report").header("Origin", "null").header("Sec-Fetch-Site", "cross-site")
                .contentType(MediaType.APPLICATION_JSON).bodyValue(body).exchange().expectStatus().isForbidden()
                .expectBody().jsonPath("$.error.code").isEqualTo("cross_site_report");
        reporter.post().uri("/report").header("Origin", "null").header("Sec-Fetch-Site", "same-origin")
                .contentType(MediaType.APPLICATION_JSON).bodyValue(body).exchange().expectStatus().isCreated();
    }

    @Test
    void aChallengeIsSpentOnlyFromTheAddressItWasIssuedTo() {
        String[] solved = solvedChallenge(from("203.0.113.70"));
        from("203.0.113.71").post().uri("/report").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("contact", "x@example.org", "description", "d", "challenge", solved[0], "nonce", solved[1]))
                .exchange().expectStatus().isBadRequest().expectBody().jsonPath("$.error.param").isEqualTo("challenge")
                .jsonPath("$.error.message").value(m -> assertThat((String) m).contains("to your address"));
    }

    @Test
    void theAddressesOfOneIpv6NetworkShareOneLimit() {
        for (int i = 1; i <= 3; i++) { // three per hour (refused ones count)
            from("2001:db8:60:1::" + i).post().uri("/report").contentType(MediaType.APPLICATION_JSON)
                    .bodyValue(Map.of("contact", "x@example.org", "description", "d")).exchange().expectStatus().isBadRequest();
        }
        from("2001:db8:60:1:ffff::4").post().uri("/report").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("contact", "x@example.org", "description", "d")).exchange().expectStatus().isEqualTo(429);
        from("2001:db8:60:2::1").post().uri("/report").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("contact", "x@example.org", "description", "d")).exchange().expectStatus().isBadRequest();
    }
}
