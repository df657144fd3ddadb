package dev.pagewarden.adminui.names;

import java.util.Map;

/**
 * What the pages show for ids: tenants by their display name, engine request ids with the id the tenant was
 * given. {@code responses} holds the public part only: whether the tenant saw it as {@code cmpl-} or
 * {@code chatcmpl-} is not recorded, and both end in {@code cmpl-} and the same characters.
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

    /** The tenant-visible id of an engine request ("…cmpl-" and its public part), null when it has none (lab replays). */
    public String response(long requestId) {
        String publicId = responses.get(requestId);
        return publicId == null ? null : "…cmpl-" + publicId;
    }
}
