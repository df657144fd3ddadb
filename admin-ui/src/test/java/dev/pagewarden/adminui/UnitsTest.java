package dev.pagewarden.adminui;

import dev.pagewarden.adminui.audit.AuditService;
import dev.pagewarden.adminui.disclosure.Markdown;
import dev.pagewarden.adminui.users.AdminRole;
import dev.pagewarden.db.audit.Exposure;
import dev.pagewarden.incident.disclosure.WebhookService;
import org.junit.jupiter.api.Test;
import org.springframework.security.core.GrantedAuthority;

import java.time.Instant;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The admin UI's pure pieces: roles, webhook signatures, CSV export, time parsing, Markdown safety. */
class UnitsTest {

    @Test
    void rolesAreCumulative() {
        assertThat(AdminRole.VIEWER.authorities()).extracting(GrantedAuthority::getAuthority).containsExactly("ROLE_VIEWER");
        assertThat(AdminRole.PUBLISHER.authorities()).extracting(GrantedAuthority::getAuthority)
                .containsExactly("ROLE_VIEWER", "ROLE_RESPONDER", "ROLE_PUBLISHER");
        assertThat(AdminRole.parse(" Responder ")).isEqualTo(AdminRole.RESPONDER);
        assertThatThrownBy(() -> AdminRole.parse("root")).hasMessageContaining("unknown role 'root'");
    }

    @Test
    void webhookSignatureIsHexHmacSha256OfTheBody() {
        // RFC 4231 test case 2
        assertThat(WebhookService.sign("Jefe", "what do ya want for nothing?"))
                .isEqualTo("5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
    }

    @Test
    void csvQuotesFieldsAndDefusesSpreadsheetFormulas() {
        Instant t = Instant.parse("2026-11-30T05:00:00Z");
        String csv = AuditService.csv(List.of(new Exposure("=cmd|x", 7, "a,b", 9, "node-a", "decode-0", 3, 2, 1, 16, t, t)));
        assertThat(csv.split("\r\n")[1]).isEqualTo("2026-11-30T05:00:00Z,node-a,decode-0,3,2,9,\"a,b\",7,'=cmd|x,1,16,2026-11-30T05:00:00Z");
    }

    @Test
    void timesAreIsoOrBrowserLocalAsUtc() {
        assertThat(AuditService.parseTime("from", "2026-11-30T05:00:00Z")).isEqualTo(Instant.parse("2026-11-30T05:00:00Z"));
        assertThat(AuditService.parseTime("from", "2026-11-30T05:00")).isEqualTo(Instant.parse("2026-11-30T05:00:00Z"));
        assertThatThrownBy(() -> AuditService.parseTime("from", "yesterday")).hasMessageContaining("'from' is not a time");
        assertThatThrownBy(() -> AuditService.parseTime("to", " ")).hasMessageContaining("'to' is required");
    }

    @Test
    void markdownEscapesRawHtmlAndDropsScriptLinks() {
        String html = new Markdown().html("## Cause\n<script>alert(1)</script>\n\n[x](javascript:alert) [ok](https://example.com)");
        assertThat(html).contains("<h2>Cause</h2>").contains("&lt;script&gt;").doesNotContain("<script>")
                .doesNotContain("href=\"javascript:").contains("href=\"https://example.com\"");
    }
}
