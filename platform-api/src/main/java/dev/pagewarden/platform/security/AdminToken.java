package dev.pagewarden.platform.security;

import dev.pagewarden.platform.config.PagewardenProperties;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.stereotype.Component;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.HexFormat;

/**
 * The automation token for {@code /admin/api}: {@code PAGEWARDEN_ADMIN_TOKEN} when set; otherwise
 * one generated at start and printed once in the log, so a first-time operator can create a tenant.
 */
@Component
public class AdminToken {
    private static final Logger LOG = LoggerFactory.getLogger(AdminToken.class);

    private final byte[] token;
    private final boolean generated;

    public AdminToken(PagewardenProperties properties) {
        String configured = properties.adminToken();
        if (configured != null && !configured.isBlank()) {
            if (configured.length() < 16) {
                throw new IllegalStateException("pagewarden.admin-token (PAGEWARDEN_ADMIN_TOKEN) must be at least 16 "
                        + "characters long");
            }
            this.token = configured.getBytes(StandardCharsets.UTF_8);
            this.generated = false;
        } else {
            byte[] random = new byte[24];
            new SecureRandom().nextBytes(random);
            String value = "pwadm_" + HexFormat.of().formatHex(random);
            this.token = value.getBytes(StandardCharsets.UTF_8);
            this.generated = true;
            LOG.warn("PAGEWARDEN_ADMIN_TOKEN is not set: generated an admin token for this run only: {}", value);
        }
    }

    /** Compares SHA-256 digests, so the time taken depends on neither the token's length nor its content. */
    boolean matches(String presented) {
        return presented != null && MessageDigest.isEqual(sha256(token), sha256(presented.getBytes(StandardCharsets.UTF_8)));
    }

    private static byte[] sha256(byte[] bytes) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(bytes);
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException("no SHA-256 in this JDK", e);
        }
    }

    /** The generated token, for the start-up banner; null when the operator configured one. */
    public String generatedValue() {
        return generated ? new String(token, StandardCharsets.UTF_8) : null;
    }
}
