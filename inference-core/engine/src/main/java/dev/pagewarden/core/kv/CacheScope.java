package dev.pagewarden.core.kv;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * Who may read a cached prefix page: one tenant, narrowed by the request's prompt cache key (null: the
 * tenant's requests that name no key). A page's owner tag names it; a read from any other scope is
 * refused exactly as a read of another request's page is.
 *
 * @param tenant the tenant
 * @param key    the prompt cache key (OpenAI's {@code prompt_cache_key}, vLLM's {@code cache_salt}); null for none
 */
public record CacheScope(String tenant, String key) {
    public CacheScope {
        if (tenant == null || tenant.isEmpty()) {
            throw new IllegalArgumentException("a cache scope names its tenant");
        }
    }

    /**
     * The scope as one string, unambiguous for any tenant and key (lengths first), as page tags hold it.
     */
    public String id() {
        return tenant.length() + ":" + tenant + (key == null ? "|" : "#" + key.length() + ":" + key);
    }

    /** 64 bits of SHA-256 over {@link #id}: what lineage events carry instead of the scope's text. */
    public long digest() {
        byte[] h = sha256().digest(id().getBytes(StandardCharsets.UTF_8));
        long d = 0;
        for (int i = 0; i < 8; i++) {
            d = (d << 8) | (h[i] & 0xff);
        }
        return d;
    }

    static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this Java runtime", e);
        }
    }
}
