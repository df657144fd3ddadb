package dev.pagewarden.incident.audit;

import java.time.Instant;

/** What the admin audit log is narrowed to: each part null for "any"; {@code action} matches a prefix (incident.). */
public record AdminAuditFilter(String actor, String action, Instant from, Instant to) {
    public static final AdminAuditFilter NONE = new AdminAuditFilter(null, null, null, null);

    public AdminAuditFilter {
        actor = blankToNull(actor);
        action = blankToNull(action);
        if (from != null && to != null && !to.isAfter(from)) {
            throw new IllegalArgumentException("'to' must be after 'from'");
        }
    }

    private static String blankToNull(String s) {
        return s == null || s.isBlank() ? null : s.strip();
    }
}
