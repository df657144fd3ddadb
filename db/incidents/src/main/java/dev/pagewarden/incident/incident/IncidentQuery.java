package dev.pagewarden.incident.incident;

import dev.pagewarden.incident.input.LikePattern;
import dev.pagewarden.incident.input.Paging;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Component;

import java.sql.Timestamp;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The incident list as the forensics pages ask for it: filtered, sorted, paged or whole (CSV), the counts of
 * the overview, and what the detectors and the lineage sweep found lately. All read from PostgreSQL, so they
 * are the same on every replica and after a restart. Blocking.
 */
@Component
public class IncidentQuery {
    /**
     * (incident_id, tenant) for every tenant an incident concerns: tenants of the detector events on its pool
     * while it was receiving events, and both sides (reader and writer) of the exposures the sweep filed into it.
     */
    private static final String INCIDENT_TENANTS = """
            SELECT i.id AS incident_id, s.tenant_id AS tenant FROM incidents i JOIN safety_events s
              ON s.node = i.node AND s.worker = i.worker AND s.event_time BETWEEN i.first_event AND i.last_event
             WHERE s.tenant_id IS NOT NULL
            UNION
            SELECT x.incident_id, l.tenant_id FROM incident_exposures x
              JOIN kv_lineage l ON l.request_id IN (x.reader_request, x.exposing_request)
             WHERE x.incident_id IS NOT NULL AND l.tenant_id IS NOT NULL""";

    private final JdbcClient jdbc;
    private final Clock clock;

    IncidentQuery(JdbcClient jdbc, Clock clock) {
        this.jdbc = jdbc;
        this.clock = clock;
    }

    /** One page of the incidents matching {@code filter}, in its order. */
    public Paging.Page<Incident> page(IncidentFilter filter, Paging paging) {
        Where where = where(filter);
        long total = where.bind(jdbc.sql("SELECT count(*) FROM incidents i" + where.sql)).query(Long.class).single();
        List<Incident> rows = where.bind(jdbc.sql("SELECT i.* FROM incidents i" + where.sql + orderBy(filter)
                        + " LIMIT :limit OFFSET :offset")).param("limit", paging.size()).param("offset", paging.offset())
                .query(IncidentService.INCIDENT).list();
        return new Paging.Page<>(rows, total, paging);
    }

    /** Every incident matching {@code filter} up to {@code max}, in its order (the CSV export). */
    public List<Incident> all(IncidentFilter filter, int max) {
        Where where = where(filter);
        return where.bind(jdbc.sql("SELECT i.* FROM incidents i" + where.sql + orderBy(filter) + " LIMIT :limit"))
                .param("limit", max).query(IncidentService.INCIDENT).list();
    }

    private static String orderBy(IncidentFilter f) {
        String dir = f.descending() ? " DESC" : " ASC";
        return " ORDER BY " + f.sort().sql + dir + (f.sort() == IncidentFilter.Sort.ID ? "" : ", i.id" + dir);
    }

    private record Where(String sql, Map<String, Object> params) {
        JdbcClient.StatementSpec bind(JdbcClient.StatementSpec spec) {
            return spec.params(params);
        }
    }

    private static Where where(IncidentFilter f) {
        StringBuilder sql = new StringBuilder(" WHERE true");
        Map<String, Object> p = new LinkedHashMap<>();
        if (f.status() != null) {
            sql.append(" AND i.status = :status");
            p.put("status", f.status().name());
        }
        if (f.severity() != null) {
            sql.append(" AND i.severity = :severity");
            p.put("severity", f.severity());
        }
        if (f.from() != null) {
            sql.append(" AND i.last_event >= :from");
            p.put("from", Timestamp.from(f.from()));
        }
        if (f.to() != null) {
            sql.append(" AND i.first_event < :to");
            p.put("to", Timestamp.from(f.to()));
        }
        if (f.tenant() != null) {
            sql.append(" AND i.id IN (SELECT incident_id FROM (").append(INCIDENT_TENANTS).append(") t WHERE t.tenant = :tenant)");
            p.put("tenant", f.tenant());
        }
        if (f.text() != null) {
            sql.append(" AND").append("""
                     (i.title ILIKE :text ESCAPE '\\' OR i.model_id ILIKE :text ESCAPE '\\' OR i.node ILIKE :text ESCAPE '\\'
                       OR i.worker ILIKE :text ESCAPE '\\' OR CAST(i.id AS text) = :exact
                       OR EXISTS (SELECT 1 FROM incident_entries e WHERE e.incident_id = i.id AND e.text ILIKE :text ESCAPE '\\'))""");
            p.put("text", LikePattern.contains(f.text()));
            p.put("exact", f.text().startsWith("#") ? f.text().substring(1) : f.text());
        }
        return new Where(sql.toString(), p);
    }

    /** The overview's tiles. {@code exposedReads24h}: exposures the lineage sweep filed in the last 24 hours. */
    public record Counts(long openCritical, long openWarning, long reported, long affectedTenants, long exposedReads24h,
                         long safetyEvents24h) {
        public long open() {
            return openCritical + openWarning;
        }
    }

    public Counts counts() {
        Timestamp dayAgo = Timestamp.from(clock.instant().minus(Duration.ofHours(24)));
        return jdbc.sql("SELECT"
                        + " (SELECT count(*) FROM incidents WHERE status <> 'RESOLVED' AND severity = 'CRITICAL'),"
                        + " (SELECT count(*) FROM incidents WHERE status <> 'RESOLVED' AND severity = 'WARNING'),"
                        + " (SELECT count(*) FROM incidents WHERE status = 'REPORTED'),"
                        + " (SELECT count(DISTINCT t.tenant) FROM (" + INCIDENT_TENANTS + ") t JOIN incidents i"
                        + "    ON i.id = t.incident_id WHERE i.status <> 'RESOLVED'),"
                        + " (SELECT count(*) FROM incident_exposures WHERE filed_at >= :since),"
                        + " (SELECT count(*) FROM safety_events WHERE event_time >= :since)")
                .param("since", dayAgo)
                .query((rs, i) -> new Counts(rs.getLong(1), rs.getLong(2), rs.getLong(3), rs.getLong(4), rs.getLong(5), rs.getLong(6)))
                .single();
    }

    /** The open critical incidents, newest first: the overview's banner. */
    public List<Incident> openCritical(int max) {
        return jdbc.sql("SELECT * FROM incidents WHERE status <> 'RESOLVED' AND severity = 'CRITICAL' ORDER BY id DESC LIMIT :n")
                .param("n", max).query(IncidentService.INCIDENT).list();
    }

    /**
     * What was found lately, newest first: the engine detectors' events ({@code safety_events}) and the lineage
     * sweep's filings (its timeline entries; the incident they went into is linked).
     */
    public record Finding(Instant at, Source source, String type, String severity, String node, String worker, Long requestId,
                          String tenant, String details, Long incidentId) {
        public enum Source {
            DETECTOR, SWEEP;

            public String label() {
                return this == DETECTOR ? "detector" : "lineage sweep";
            }
        }
    }

    public List<Finding> recentFindings(int max) {
        return jdbc.sql("""
                        SELECT * FROM (
                          (SELECT s.event_time AS at, 'DETECTOR' AS source, s.type, s.severity, s.node, s.worker, s.request_id,
                                  s.tenant_id, s.details, NULL::bigint AS incident_id, s.id AS tie
                             FROM safety_events s ORDER BY s.event_time DESC, s.id DESC LIMIT :n)
                          UNION ALL
                          (SELECT e.at, 'SWEEP', 'lineage-exposure', i.severity, i.node, i.worker, NULL, NULL, e.text, i.id, e.id
                             FROM incident_entries e JOIN incidents i ON i.id = e.incident_id
                            WHERE e.kind = 'DETECTOR' AND e.actor = 'detector:lineage-exposure' ORDER BY e.at DESC, e.id DESC LIMIT :n)
                        ) f ORDER BY at DESC, tie DESC LIMIT :n""")
                .param("n", max)
                .query((rs, i) -> new Finding(rs.getTimestamp("at").toInstant(), Finding.Source.valueOf(rs.getString("source")),
                        label(rs.getString("type")), rs.getString("severity"), rs.getString("node"), rs.getString("worker"),
                        (Long) rs.getObject("request_id"), rs.getString("tenant_id"), rs.getString("details"),
                        (Long) rs.getObject("incident_id")))
                .list();
    }

    /** Detector names as the engine's metrics write them (OWNER_TAG_MISMATCH: owner-tag-mismatch). */
    static String label(String type) {
        return type.toLowerCase(java.util.Locale.ROOT).replace('_', '-');
    }
}
