package dev.pagewarden.platform.report;

import dev.pagewarden.incident.report.ReportProperties;
import org.springframework.http.CacheControl;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;

/**
 * {@code /.well-known/security.txt} (RFC 9116): Contact the public report form (and any configured
 * contacts), Expires (configured, or computed ahead from now), Preferred-Languages, and Canonical
 * when the public URL is configured.
 */
@RestController
class SecurityTxtController {
    private final ReportProperties properties;
    private final Clock clock;

    SecurityTxtController(ReportProperties properties, Clock clock) {
        this.properties = properties;
        this.clock = clock;
    }

    @GetMapping("/.well-known/security.txt")
    ResponseEntity<String> securityTxt(ServerHttpRequest request) {
        return ResponseEntity.ok().contentType(new MediaType("text", "plain", java.nio.charset.StandardCharsets.UTF_8))
                // derived from the Host header, the answer must not be cached for other clients
                .cacheControl(properties.publicUrl() != null ? CacheControl.maxAge(Duration.ofHours(1)) : CacheControl.noStore())
                .body(text(request));
    }

    String text(ServerHttpRequest request) {
        String base = base(request);
        StringBuilder sb = new StringBuilder();
        sb.append("# Report a suspected data exposure or other security problem; no account needed.\n");
        sb.append("Contact: ").append(base).append("/report\n");
        for (String contact : properties.contacts()) {
            sb.append("Contact: ").append(contact.strip()).append('\n');
        }
        Instant expires = properties.expires() != null ? properties.expires()
                : clock.instant().plus(properties.expiresAfter()).truncatedTo(ChronoUnit.DAYS);
        sb.append("Expires: ").append(expires.truncatedTo(ChronoUnit.SECONDS)).append('\n');
        sb.append("Preferred-Languages: ").append(properties.languages()).append('\n');
        if (properties.publicUrl() != null) {
            sb.append("Canonical: ").append(base).append("/.well-known/security.txt\n");
        }
        return sb.toString();
    }

    /** The configured public URL (no trailing slash); otherwise the scheme, host and port this request came to. */
    private String base(ServerHttpRequest request) {
        URI configured = properties.publicUrl();
        if (configured != null) {
            String s = configured.toString();
            return s.endsWith("/") ? s.substring(0, s.length() - 1) : s;
        }
        URI uri = request.getURI();
        return uri.getScheme() + "://" + uri.getRawAuthority();
    }
}
