package dev.pagewarden.platform.adminport;

import dev.pagewarden.adminui.users.AdminRole;
import dev.pagewarden.adminui.users.AdminUserService;
import dev.pagewarden.platform.testing.PlatformTest;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.HttpHeaders;
import org.springframework.test.web.reactive.server.EntityExchangeResult;

import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What browsers are told: every HTML page has a Content-Security-Policy (own origin only, no
 * framing), a UTF-8 charset and nosniff; the pages carry no inline script or style the policy would
 * block; the session cookie is HttpOnly and SameSite=Strict.
 */
class BrowserHeadersTest extends PlatformTest {
    private static final Pattern INLINE = Pattern.compile("<script(?![^>]*\\bsrc=)[^>]*>|<style|\\sstyle=|\\son[a-z]+=|javascript:",
            Pattern.CASE_INSENSITIVE);

    @Autowired
    AdminUserService users;

    @Test
    void htmlPagesCarryThePolicyAndTheCharset() {
        if (users.findByName("csp-admin").isEmpty()) {
            users.create("csp-admin", "correct-horse-battery", AdminRole.ADMIN, "test");
        }
        UiSession ui = new UiSession(baseUrl());
        EntityExchangeResult<String> login = ui.get("/admin/login");
        String cookie = login.getResponseHeaders().getFirst(HttpHeaders.SET_COOKIE);
        assertThat(cookie).startsWith("SESSION=").containsIgnoringCase("; HttpOnly").contains("SameSite=Strict");
        ui.login("csp-admin", "correct-horse-battery");
        for (String page : new String[]{"/admin/login", "/admin", "/admin/overview/panel", "/admin/incidents", "/admin/tenants",
                "/admin/users", "/admin/audit", "/admin/disclosures", "/status", "/admin/incidents/999999999"}) {
            EntityExchangeResult<String> r = ui.get(page);
            HttpHeaders h = r.getResponseHeaders();
            assertThat(h.getContentType()).as(page).isNotNull();
            assertThat(h.getContentType().toString()).as(page).isEqualTo("text/html;charset=UTF-8");
            assertThat(h.getFirst("Content-Security-Policy")).as(page)
                    .contains("script-src 'self'").contains("style-src 'self'").contains("frame-ancestors 'none'")
                    .doesNotContain("unsafe-inline").doesNotContain("unsafe-eval");
            assertThat(h.getFirst("X-Content-Type-Options")).as(page).isEqualTo("nosniff");
            assertThat(INLINE.matcher(r.getResponseBody()).find()).as(page + " has inline script or style").isFalse();
        }
    }

    @Test
    void jsonAnswersAreNotSniffedEither() {
        var r = client().get().uri("/v1/models").exchange().expectStatus().isUnauthorized().expectBody(String.class).returnResult();
        assertThat(r.getResponseHeaders().getFirst("X-Content-Type-Options")).isEqualTo("nosniff");
        assertThat(r.getResponseHeaders().getFirst("Content-Security-Policy")).isNull();
    }
}
