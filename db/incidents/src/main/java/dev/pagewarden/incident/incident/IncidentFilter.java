package dev.pagewarden.incident.incident;

import java.time.Instant;
import java.util.Locale;

/**
 * What the incident list is narrowed to: each part null for "any". {@code from}/{@code to} keep incidents whose
 * events overlap [from, to); {@code text} is searched in the title, model, node, worker and timeline.
 */
public record IncidentFilter(Incident.Status status, String severity, String tenant, Instant from, Instant to, String text,
                             Sort sort, boolean descending) {

    /** The columns the list can be sorted by (the SQL is fixed here, never taken from the request). */
    public enum Sort {
        ID("i.id"), TITLE("i.title"), STATUS("array_position(ARRAY['REPORTED','INVESTIGATING','IDENTIFIED','MITIGATED','RESOLVED'], i.status)"),
        SEVERITY("i.severity"), EVENTS("i.events"), OPENED("i.opened_at"), LAST_EVENT("i.last_event");

        final String sql;

        Sort(String sql) {
            this.sql = sql;
        }

        public String label() {
            return name().toLowerCase(Locale.ROOT).replace('_', '-');
        }
    }

    public static final IncidentFilter NONE = new IncidentFilter(null, null, null, null, null, null, Sort.ID, true);

    public IncidentFilter {
        severity = blankToNull(severity);
        tenant = blankToNull(tenant);
        text = blankToNull(text);
        if (severity != null) {
            severity = severity.toUpperCase(Locale.ROOT);
            if (!severity.equals("CRITICAL") && !severity.equals("WARNING")) {
                throw new IllegalArgumentException("unknown severity '" + severity.toLowerCase(Locale.ROOT) + "': critical or warning");
            }
        }
        if (from != null && to != null && !to.isAfter(from)) {
            throw new IllegalArgumentException("'to' must be after 'from'");
        }
        sort = sort == null ? Sort.ID : sort;
    }

    /** From request parameters (lower-case names as shown in the page); an unknown value is refused with the choices. */
    public static IncidentFilter of(String status, String severity, String tenant, Instant from, Instant to, String text,
                                    String sort, String dir) {
        Incident.Status s = null;
        if (blankToNull(status) != null) {
            try {
                s = Incident.Status.valueOf(status.strip().toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("unknown status '" + status + "': reported, investigating, identified, mitigated or resolved");
            }
        }
        Sort by = Sort.ID;
        if (blankToNull(sort) != null) {
            try {
                by = Sort.valueOf(sort.strip().toUpperCase(Locale.ROOT).replace('-', '_'));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("unknown sort '" + sort + "': id, title, status, severity, events, opened or last-event");
            }
        }
        boolean descending = blankToNull(dir) == null ? by != Sort.TITLE : !dir.strip().equalsIgnoreCase("asc");
        return new IncidentFilter(s, severity, tenant, from, to, text, by, descending);
    }

    private static String blankToNull(String s) {
        return s == null || s.isBlank() ? null : s.strip();
    }
}
