package dev.pagewarden.platform.security;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.stereotype.Component;


/**
 * The scrape token ({@code pagewarden.metrics-token}, env {@code PAGEWARDEN_METRICS_TOKEN}): a bearer
 * token that reads health details and metrics on the management port and nothing else, so a
 * Prometheus server needs no admin token. Unset: only the admin token reads them.
 */
@Component
public class MetricsToken {
    private final TokenDigest token;

    MetricsToken(@Value("${pagewarden.metrics-token:}") String configured) {
        if (!configured.isBlank() && configured.length() < 16) {
            throw new IllegalStateException("pagewarden.metrics-token (PAGEWARDEN_METRICS_TOKEN) must be at least 16 "
                    + "characters long");
        }
        this.token = configured.isBlank() ? null : new TokenDigest(configured);
    }

    /** Constant time: see {@link TokenDigest}. */
    public boolean matches(String presented) {
        return token != null && token.matches(presented);
    }
}
