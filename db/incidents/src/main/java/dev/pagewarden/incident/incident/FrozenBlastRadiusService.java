package dev.pagewarden.incident.incident;

import dev.pagewarden.core.receipt.ReceiptSigner;
import dev.pagewarden.db.audit.BlastRadius;
import dev.pagewarden.db.audit.Exposure;
import dev.pagewarden.db.audit.LineageQueries;
import dev.pagewarden.db.audit.ReceiptKeyRegistry;
import dev.pagewarden.db.evidence.Canonical;
import dev.pagewarden.db.evidence.Checkpoints;
import dev.pagewarden.db.lineage.PartitionManager;
import dev.pagewarden.incident.PlatformPort;
import dev.pagewarden.incident.audit.AdminAuditLog;
import dev.pagewarden.incident.incident.Incident;
import dev.pagewarden.incident.incident.IncidentService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.jdbc.core.ConnectionCallback;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.SqlTypeValue;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Service;
import org.springframework.transaction.support.TransactionTemplate;

import javax.sql.DataSource;
import java.security.PublicKey;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Clock;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The frozen blast radius: when a disclosure is published, its affected set (requests on both sides, tenants,
 * pages, window, node) is computed once from the lineage, stored with it and signed with the receipt key.
 * Notices, the incident page and receipt checks answer from it, so they do not change when the lineage is
 * dropped after the retention. A later recomputation over the same window that comes out different is not
 * taken: it is recorded, shown and raised as a {@code blast-radius-drift} safety event (once per distinct result).
 */
@Service
public class FrozenBlastRadiusService {
    private static final Logger LOG = LoggerFactory.getLogger(FrozenBlastRadiusService.class);
    static final String FORMAT = "pagewarden-frozen-blast-radius v1";
    /** Safety event type of a recomputation that differs from the frozen set. */
    public static final String DRIFT_TYPE = "BLAST_RADIUS_DRIFT";
    private static final int QUERY_TIMEOUT_S = 10;
    private static final int HEADER_LINES = 8;

    private final JdbcClient jdbc;
    private final JdbcTemplate template;
    private final IncidentService incidents;
    private final LineageQueries lineage;
    private final PlatformPort platform;
    private final ReceiptSigner signer;
    private final ReceiptKeyRegistry keys;
    private final AdminAuditLog audit;
    private final TransactionTemplate tx;
    private final Clock clock;

    FrozenBlastRadiusService(DataSource dataSource, IncidentService incidents, LineageQueries lineage, PlatformPort platform,
                             ReceiptSigner signer, ReceiptKeyRegistry keys, AdminAuditLog audit, TransactionTemplate tx,
                             Clock clock) {
        this.template = new JdbcTemplate(dataSource);
        template.setQueryTimeout(QUERY_TIMEOUT_S);
        this.jdbc = JdbcClient.create(template);
        this.incidents = incidents;
        this.lineage = lineage;
        this.platform = platform;
        this.signer = signer;
        this.keys = keys;
        this.audit = audit;
        this.tx = tx;
        this.clock = clock;
    }

    /**
     * Computes, stores and signs the affected set of a disclosure being published, over the incident's window
     * as it stands now. Runs inside the publishing transaction: a failure here publishes nothing.
     */
    public void freeze(long disclosureId, int version, Incident incident) {
        Instant[] w = incidents.window(incident);
        Computed set = compute(incident.model(), w[0], w[1]);
        String canonical = header(disclosureId, version, incident, w) + String.join("", set.lines());
        byte[] digest = Canonical.sha256(canonical);
        ReceiptSigner.Signed signed = signer.sign(digest);
        Timestamp now = Timestamp.from(clock.instant());
        jdbc.sql("""
                INSERT INTO frozen_blast_radius (disclosure_id, incident_id, window_from, window_to, model_id, node, worker,
                  frozen_at, canonical, digest, key_id, signature)
                VALUES (:d, :i, :from, :to, :model, :node, :worker, :now, :canonical, :digest, :key, :sig)""")
                .param("d", disclosureId).param("i", incident.id()).param("from", Timestamp.from(w[0])).param("to", Timestamp.from(w[1]))
                .param("model", incident.model()).param("node", incident.node()).param("worker", incident.worker())
                .param("now", now).param("canonical", canonical).param("digest", digest).param("key", signed.keyId())
                .param("sig", signed.signature()).update();
        for (Row r : set.rows()) {
            jdbc.sql("""
                    INSERT INTO frozen_blast_radius_requests (disclosure_id, request_id, tenant_id, side, status, counterparts,
                      counterpart_tenants) VALUES (:d, :r, :t, :side, :status, :c, :ct)""")
                    .param("d", disclosureId).param("r", r.row().request()).param("t", r.row().tenant()).param("side", r.side())
                    .param("status", r.row().status())
                    .param("c", array("bigint", r.row().counterparts().toArray()))
                    .param("ct", array("text", r.row().counterpartTenants().toArray()))
                    .update();
        }
    }

    /** The frozen set of a published disclosure; empty for drafts and for versions published before it was kept. */
    public Optional<FrozenBlastRadius> get(long disclosureId) {
        record Head(long incident, Instant from, Instant to, String model, String node, String worker, Instant at, String canonical,
                    byte[] digest, String keyId, byte[] signature) {
        }
        Optional<Head> head = jdbc.sql("SELECT * FROM frozen_blast_radius WHERE disclosure_id = :d").param("d", disclosureId)
                .query((rs, i) -> new Head(rs.getLong("incident_id"), rs.getTimestamp("window_from").toInstant(),
                        rs.getTimestamp("window_to").toInstant(), rs.getString("model_id"), rs.getString("node"),
                        rs.getString("worker"), rs.getTimestamp("frozen_at").toInstant(), rs.getString("canonical"),
                        rs.getBytes("digest"), rs.getString("key_id"), rs.getBytes("signature"))).optional();
        if (head.isEmpty()) {
            return Optional.empty();
        }
        Head h = head.get();
        List<FrozenBlastRadius.Row> readers = new ArrayList<>(), exposed = new ArrayList<>();
        jdbc.sql("""
                SELECT side, request_id, tenant_id, status, counterparts, counterpart_tenants FROM frozen_blast_radius_requests
                WHERE disclosure_id = :d ORDER BY side, request_id""").param("d", disclosureId).query(rs -> {
            FrozenBlastRadius.Row row = new FrozenBlastRadius.Row(rs.getLong(2), rs.getString(3), rs.getString(4),
                    Arrays.asList((Long[]) rs.getArray(5).getArray()), Arrays.asList((String[]) rs.getArray(6).getArray()));
            (rs.getString(1).equals("reader") ? readers : exposed).add(row);
        });
        List<FrozenBlastRadius.Drift> drifts = jdbc.sql("""
                SELECT seen_at, seen_by, details FROM frozen_blast_radius_drift WHERE disclosure_id = :d ORDER BY seen_at""")
                .param("d", disclosureId)
                .query((rs, i) -> new FrozenBlastRadius.Drift(rs.getTimestamp(1).toInstant(), rs.getString(2), rs.getString(3))).list();
        boolean ok = Arrays.equals(Canonical.sha256(h.canonical()), h.digest()) && verifies(h.keyId(), h.digest(), h.signature());
        return Optional.of(new FrozenBlastRadius(disclosureId, h.incident(), h.from(), h.to(), h.model(), h.node(), h.worker(), h.at(),
                h.canonical(), HexFormat.of().formatHex(h.digest()), h.keyId(), ok, readers, exposed, drifts));
    }

    /** The frozen sets of an incident's published disclosures, newest version first. */
    public List<FrozenBlastRadius> ofIncident(long incidentId) {
        return jdbc.sql("SELECT disclosure_id FROM frozen_blast_radius WHERE incident_id = :i ORDER BY disclosure_id DESC")
                .param("i", incidentId).query(Long.class).list().stream().map(this::get).flatMap(Optional::stream).toList();
    }

    /** What a recomputation of a frozen set found. */
    public enum Recheck {
        /** the lineage gives the same set */
        SAME,
        /** the lineage gives another set: recorded, and raised as a safety event when first seen */
        DIFFERS,
        /** some of the window's lineage partitions were dropped: nothing to compare, the frozen set stands */
        LINEAGE_GONE
    }

    /**
     * Recomputes a frozen set from the lineage of its window and compares. A difference seen for the first time
     * (by its digest) is stored and raised as a {@value #DRIFT_TYPE} safety event filed into the incident's pool;
     * the frozen set, and so every notice, stays as it was.
     */
    public Recheck recheck(long disclosureId) {
        FrozenBlastRadius f = get(disclosureId).orElseThrow(() -> new java.util.NoSuchElementException(
                "disclosure " + disclosureId + " has no frozen blast radius"));
        if (!lineageComplete(f.windowFrom(), f.windowTo())) {
            return Recheck.LINEAGE_GONE;
        }
        List<String> now = compute(f.model(), f.windowFrom(), f.windowTo()).lines();
        List<String> then = f.canonical().lines().skip(HEADER_LINES).map(l -> l + "\n").toList();
        if (now.equals(then)) {
            return Recheck.SAME;
        }
        Set<String> added = new TreeSet<>(now), removed = new TreeSet<>(then);
        added.removeAll(new HashSet<>(then));
        removed.removeAll(new HashSet<>(now));
        String details = "recomputed blast radius of disclosure " + disclosureId + " (incident " + f.incidentId()
                + ", window " + f.windowFrom() + " .. " + f.windowTo() + ") differs from the frozen set (digest " + f.digestHex()
                + "): added " + strip(added) + ", missing " + strip(removed) + "; notices keep the frozen set";
        byte[] digest = Canonical.sha256(String.join("", now));
        boolean first = Boolean.TRUE.equals(tx.execute(s -> jdbc.sql("""
                INSERT INTO frozen_blast_radius_drift (disclosure_id, recomputed_digest, seen_at, seen_by, details)
                VALUES (:d, :digest, :now, :by, :details) ON CONFLICT DO NOTHING""")
                .param("d", disclosureId).param("digest", digest).param("now", Timestamp.from(clock.instant()))
                .param("by", platform.nodeId()).param("details", details).update() == 1));
        if (first) {
            LOG.warn(details);
            raise(f, details);
        }
        return Recheck.DIFFERS;
    }

    /** Rechecks every frozen set of an incident (what the incident page does when shown). */
    public void recheckIncident(long incidentId) {
        for (FrozenBlastRadius f : ofIncident(incidentId)) {
            try {
                recheck(f.disclosureId());
            } catch (RuntimeException e) {
                LOG.warn("could not recheck the frozen blast radius of disclosure {}: {}", f.disclosureId(), e.getMessage());
            }
        }
    }

    /**
     * Rechecks the frozen sets whose window overlaps [from, to]: what the lineage sweep calls for the reads it
     * found, so lineage arriving late into a published window is raised without anyone opening the incident.
     */
    public void recheckOverlapping(Instant from, Instant to) {
        for (long d : jdbc.sql("""
                SELECT disclosure_id FROM frozen_blast_radius WHERE window_from <= :to AND window_to >= :from ORDER BY disclosure_id""")
                .param("from", Timestamp.from(from)).param("to", Timestamp.from(to)).query(Long.class).list()) {
            try {
                recheck(d);
            } catch (RuntimeException e) {
                LOG.warn("could not recheck the frozen blast radius of disclosure {}: {}", d, e.getMessage());
            }
        }
    }

    /** The tenant's own request ids on each side of a frozen set, as its notice lists them. */
    public record TenantRequests(List<Long> read, List<Long> exposed) {
    }

    public Optional<TenantRequests> requestsOf(long disclosureId, String tenantId) {
        boolean frozen = jdbc.sql("SELECT count(*) FROM frozen_blast_radius WHERE disclosure_id = :d").param("d", disclosureId)
                .query(Long.class).single() > 0;
        if (!frozen) {
            return Optional.empty();
        }
        List<Long> read = new ArrayList<>(), exposed = new ArrayList<>();
        jdbc.sql("""
                SELECT side, request_id FROM frozen_blast_radius_requests WHERE disclosure_id = :d AND tenant_id = :t
                ORDER BY request_id""").param("d", disclosureId).param("t", tenantId)
                .query(rs -> {
                    (rs.getString(1).equals("reader") ? read : exposed).add(rs.getLong(2));
                });
        return Optional.of(new TenantRequests(read, exposed));
    }

    private void raise(FrozenBlastRadius f, String details) {
        Instant now = clock.instant();
        // a safety event like the engine's: linked into this node's safety-event chain
        audit.writeLinked("safety_events", () -> jdbc.sql("""
                INSERT INTO safety_events (event_time, type, severity, node, worker, request_id, tenant_id, pages, epochs, details)
                VALUES (:t, :type, 'CRITICAL', :node, :worker, 0, NULL, '{}', '{}', :details) RETURNING id""")
                .param("t", Timestamp.from(now)).param("type", DRIFT_TYPE).param("node", f.node()).param("worker", f.worker())
                .param("details", details).query(Long.class).single());
        incidents.file(new IncidentService.Signal("blast-radius-drift", "CRITICAL", f.node(), f.worker(), 0, null, List.of(), now,
                details));
    }

    /** Whether every day partition of [from, to] still exists (partitions are only ever dropped oldest first). */
    private boolean lineageComplete(Instant from, Instant to) {
        Set<LocalDate> existing = new HashSet<>(template.execute((ConnectionCallback<List<LocalDate>>) PartitionManager::existing));
        for (LocalDate d = PartitionManager.dayOf(micros(from)); !d.isAfter(PartitionManager.dayOf(micros(to))); d = d.plusDays(1)) {
            if (!existing.contains(d)) {
                return false;
            }
        }
        return true;
    }

    private record Row(String side, FrozenBlastRadius.Row row) {
    }

    /** The set in canonical lines (each ending in a newline), and as rows. */
    private record Computed(List<String> lines, List<Row> rows) {
    }

    /**
     * The affected set over [from, to]: readers from the blast radius of {@code model} (as the incident page shows
     * it), exposed requests from every exposure of the window (as notices have always listed them).
     */
    private Computed compute(String model, Instant from, Instant to) {
        BlastRadius r;
        List<Exposure> exposures;
        try {
            r = lineage.blastRadius(from, to, model, null);
            exposures = lineage.exposures(from, to);
        } catch (SQLException e) {
            throw new IllegalStateException("lineage query failed: " + e.getMessage(), e);
        }
        List<String> lines = new ArrayList<>();
        List<Row> rows = new ArrayList<>();
        for (BlastRadius.AffectedResponse a : r.responses().stream()
                .sorted(java.util.Comparator.comparingLong(BlastRadius.AffectedResponse::readerRequest)).toList()) {
            List<Long> writers = List.copyOf(new TreeSet<>(a.exposingRequests()));
            List<String> tenants = List.copyOf(new TreeSet<>(a.exposedTenants()));
            lines.add("reader " + a.readerRequest() + " tenant=" + a.readerTenant() + " status=" + a.status() + " writers="
                    + join(writers) + " writer_tenants=" + String.join(",", tenants) + " pages=" + a.pages() + " slots=" + a.slots() + "\n");
            rows.add(new Row("reader", new FrozenBlastRadius.Row(a.readerRequest(), a.readerTenant(), a.status(), writers, tenants)));
        }
        Map<Long, String> exposedTenant = new TreeMap<>();
        Map<Long, Set<Long>> readers = new TreeMap<>();
        Map<Long, Set<String>> readerTenants = new TreeMap<>();
        Map<Long, Set<String>> pages = new TreeMap<>();
        for (Exposure e : exposures) {
            exposedTenant.put(e.exposingRequest(), e.exposedTenant());
            readers.computeIfAbsent(e.exposingRequest(), k -> new TreeSet<>()).add(e.readerRequest());
            readerTenants.computeIfAbsent(e.exposingRequest(), k -> new TreeSet<>()).add(String.valueOf(e.readerTenant()));
            pages.computeIfAbsent(e.exposingRequest(), k -> new TreeSet<>())
                    .add(e.node() + "/" + e.worker() + "/" + e.page() + "@" + e.writerEpoch());
        }
        for (var e : exposedTenant.entrySet()) {
            List<Long> by = List.copyOf(readers.get(e.getKey()));
            List<String> tenants = List.copyOf(readerTenants.get(e.getKey()));
            lines.add("exposed " + e.getKey() + " tenant=" + e.getValue() + " readers=" + join(by) + " reader_tenants="
                    + String.join(",", tenants) + " pages=" + String.join(",", pages.get(e.getKey())) + "\n");
            rows.add(new Row("exposed", new FrozenBlastRadius.Row(e.getKey(), e.getValue(), null, by, tenants)));
        }
        return new Computed(lines, rows);
    }

    private static String header(long disclosureId, int version, Incident incident, Instant[] w) {
        return FORMAT + "\n" + "disclosure " + disclosureId + " version " + version + "\n" + "incident " + incident.id() + "\n"
                + "window " + w[0] + " " + w[1] + "\n" + "model " + incident.model() + "\n" + "node " + incident.node() + "\n"
                + "worker " + incident.worker() + "\n" + "---\n";
    }

    private boolean verifies(String keyId, byte[] digest, byte[] signature) {
        try {
            Optional<PublicKey> key = keys.find(keyId);
            return key.isPresent() && Checkpoints.verifies(key.get(), digest, signature);
        } catch (SQLException e) {
            LOG.warn("could not verify the frozen blast radius signature ({}): {}", keyId, e.getMessage());
            return false;
        }
    }


    private static String join(List<Long> ids) {
        return String.join(",", ids.stream().map(String::valueOf).toList());
    }

    private static String strip(Set<String> lines) {
        return lines.isEmpty() ? "nothing" : lines.stream().map(String::strip).toList().toString();
    }

    private static long micros(Instant t) {
        return Math.multiplyExact(t.getEpochSecond(), 1_000_000L) + t.getNano() / 1_000;
    }

    /** A PostgreSQL array parameter built on the connection that runs the statement. */
    private static SqlTypeValue array(String type, Object[] values) {
        return (ps, index, sqlType, typeName) -> ps.setArray(index, ps.getConnection().createArrayOf(type, values));
    }
}
