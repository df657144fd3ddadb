package dev.pagewarden.adminui.names;

import java.util.Map;

/**
 * What the pages show for ids: tenants by their display name, engine request ids with the id the tenant was
 * given. {@code responses} holds the id as the tenant saw it ({@code cmpl-...}, {@code chatcmpl-...}); for rows
 * that predate the recorded prefix it holds the public part after "…cmpl-", which both prefixes end in.
 */
public record Names(Map<String, String> tenants, Map<Long, String> responses) {

    public Names {
        tenants = Map.copyOf(tenants);
        responses = Map.copyOf(responses);
    }

    /** The tenant's display name, or its id when the platform does not know it. */
    public String tenant(String id) {
        return id == null ? "" : tenants.getOrDefault(id, id);
    }

    /** The tenant-visible id of an engine request, null when it has none (lab replays). */
    public String response(long requestId) {
        return responses.get(requestId);
    }

    /** How a request's public id reads: with the prefix the tenant saw, or "…cmpl-" where it was not recorded. */
    public static String shown(String prefix, String publicId) {
        return publicId == null ? null : (prefix == null ? "…cmpl-" : prefix) + publicId;
    }
}
