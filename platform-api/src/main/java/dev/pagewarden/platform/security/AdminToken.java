package dev.pagewarden.platform.security;

import dev.pagewarden.platform.config.PagewardenProperties;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.stereotype.Component;

import java.security.SecureRandom;
import java.util.HexFormat;

/**
 * The automation token for {@code /admin/api}: {@code PAGEWARDEN_ADMIN_TOKEN} when set; otherwise
 * one generated at start and printed once in the log, so a first-time operator can create a tenant.
 */
@Component
public class AdminToken {
    private static final Logger LOG = LoggerFactory.getLogger(AdminToken.class);

    private final TokenDigest token;
    /** The token made for this run when none was configured, for the start-up banner; else null. */
    private final String generated;

    public AdminToken(PagewardenProperties properties) {
        String configured = properties.adminToken();
        if (configured != null && !configured.isBlank()) {
            if (configured.length() < 16) {
                throw new IllegalStateException("pagewarden.admin-token (PAGEWARDEN_ADMIN_TOKEN) must be at least 16 "
                        + "characters long");
            }
            this.token = new TokenDigest(configured);
            this.generated = null;
        } else {
            byte[] random = new byte[24];
            new SecureRandom().nextBytes(random);
            String value = "pwadm_" + HexFormat.of().formatHex(random);
            this.token = new TokenDigest(value);
            this.generated = value;
            LOG.warn("PAGEWARDEN_ADMIN_TOKEN is not set: generated an admin token for this run only: {}", value);
        }
    }

    /** Constant time: see {@link TokenDigest}. */
    boolean matches(String presented) {
        return token.matches(presented);
    }

    /** The generated token, for the start-up banner; null when the operator configured one. */
    public String generatedValue() {
        return generated;
    }
}
