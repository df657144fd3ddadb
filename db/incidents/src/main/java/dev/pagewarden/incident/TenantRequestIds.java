package dev.pagewarden.incident;

import java.util.List;

/**
 * The ids tenants are given: a prefix naming the endpoint ({@code cmpl-}, {@code chatcmpl-}, {@code resp_}) and the
 * public id stored in {@code requests.public_id}. Every lookup by such an id strips the prefix here.
 */
public final class TenantRequestIds {
    /** Longest first, so that {@code chatcmpl-} is never read as something else. */
    public static final List<String> PREFIXES = List.of("chatcmpl-", "cmpl-", "resp_");

    private TenantRequestIds() {
    }

    /** {@code id} without its endpoint prefix, if it has one. */
    public static String bare(String id) {
        for (String p : PREFIXES) {
            if (id.startsWith(p)) {
                return id.substring(p.length());
            }
        }
        return id;
    }
}
