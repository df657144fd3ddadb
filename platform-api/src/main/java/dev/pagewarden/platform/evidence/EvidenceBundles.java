package dev.pagewarden.platform.evidence;

import dev.pagewarden.core.receipt.ReceiptKeys;
import dev.pagewarden.core.receipt.TrustedKeys;
import dev.pagewarden.db.audit.BlastRadius;
import dev.pagewarden.db.audit.Exposure;
import dev.pagewarden.db.audit.KeyTrust;
import dev.pagewarden.db.evidence.Canonical;
import dev.pagewarden.db.evidence.Checkpoints;
import dev.pagewarden.db.evidence.EvidenceExport;
import dev.pagewarden.incident.audit.AdminAuditLog;
import dev.pagewarden.incident.disclosure.Disclosure;
import dev.pagewarden.incident.disclosure.DisclosureService;
import dev.pagewarden.incident.incident.Incident;
import dev.pagewarden.incident.incident.IncidentService;
import dev.pagewarden.platform.audit.PublishedKeys;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Service;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Set;
import java.util.TreeSet;

/**
 * Evidence bundles of an incident: the operator's (timeline, lineage rows of the blast radius, receipts,
 * safety events, disclosure versions) and a tenant's slice (its own lineage rows and receipts, the
 * published disclosure versions), each with the chain links, batch records and row hashes that tie them to
 * signed checkpoints, signed with this replica's receipt key. Blocking.
 */
@Service
class EvidenceBundles {
    private final DataSource dataSource;
    private final JdbcClient jdbc;
    private final IncidentService incidents;
    private final DisclosureService disclosures;
    private final ReceiptKeys keys;
    private final KeyTrust trust;
    private final Checkpoints checkpoints;
    private final AdminAuditLog audit;
    private final Clock clock;

    EvidenceBundles(DataSource dataSource, JdbcClient jdbc, IncidentService incidents, DisclosureService disclosures, ReceiptKeys keys,
                    KeyTrust trust, Checkpoints checkpoints, AdminAuditLog audit, Clock clock) {
        this.dataSource = dataSource;
        this.jdbc = jdbc;
        this.incidents = incidents;
        this.disclosures = disclosures;
        this.keys = keys;
        this.trust = trust;
        this.checkpoints = checkpoints;
        this.audit = audit;
        this.clock = clock;
    }

    /** The operator's bundle; the export is written to the admin audit with the manifest's hash. */
    byte[] incident(long id, String actor) throws SQLException {
        Incident incident = incidents.get(id);
        Instant[] w = incidents.window(incident);
        BlastRadius radius = incidents.blastRadius(incident);
        Set<Long> requests = new TreeSet<>();
        for (BlastRadius.AffectedResponse r : radius.responses()) {
            requests.add(r.readerRequest());
            requests.addAll(r.exposingRequests());
        }
        List<Long> timeline = incidents.timeline(id).stream().map(Incident.Entry::id).toList();
        List<Long> safety = jdbc.sql("""
                SELECT id FROM safety_events WHERE node = :node AND worker = :worker AND event_time >= :from AND event_time <= :to
                ORDER BY id""").param("node", incident.node()).param("worker", incident.worker())
                .param("from", Timestamp.from(w[0])).param("to", Timestamp.from(w[1])).query(Long.class).list();
        List<Long> versions = disclosures.versions(id).stream().map(Disclosure::id).toList();
        Map<String, Object> summary = new LinkedHashMap<>();
        summary.put("incident", incidentView(incident));
        summary.put("window", Map.of("from", w[0].toString(), "to", w[1].toString()));
        summary.put("affected_responses", radius.affectedResponses());
        summary.put("delivered_responses", radius.deliveredResponses());
        summary.put("exposed_tenants", radius.exposedTenants());
        summary.put("reader_tenants", radius.readerTenants());
        byte[] zip = bundle(id, null, summary, Map.of("incident_entries", timeline, "safety_events", safety, "disclosures", versions),
                requests, w, null);
        audit.record(actor, "evidence.export", "incident " + id, "bundle sha256 " + HexFormat.of().formatHex(Canonical.sha256(zip)));
        return zip;
    }

    /**
     * A tenant's slice; {@link NoSuchElementException} when the incident did not concern the tenant. Whether it
     * might is asked first, of the filed exposures and the notices only ({@link #mayConcern}), so that an incident
     * that concerns the tenant in no way answers after the same work as a missing one.
     */
    byte[] tenant(long id, String tenant) throws SQLException {
        if (!mayConcern(id, tenant)) {
            throw new NoSuchElementException("incident " + id + " concerns no request of this tenant");
        }
        Incident incident = incidents.get(id);
        Instant[] w = incidents.window(incident);
        Set<Long> readers = new TreeSet<>();
        for (BlastRadius.AffectedResponse r : incidents.blastRadius(incident).responses()) {
            readers.add(r.readerRequest());
        }
        Set<Long> requests = new TreeSet<>();
        for (Exposure e : incidents.exposures(incident)) {
            if (!readers.contains(e.readerRequest())) {
                continue;
            }
            if (tenant.equals(e.readerTenant())) {
                requests.add(e.readerRequest());
            }
            if (tenant.equals(e.exposedTenant())) {
                requests.add(e.exposingRequest());
            }
        }
        if (requests.isEmpty()) {
            throw new NoSuchElementException("incident " + id + " concerns no request of this tenant");
        }
        List<Long> published = disclosures.versions(id).stream().filter(d -> d.status() == Disclosure.Status.PUBLISHED)
                .map(Disclosure::id).toList();
        Map<String, Object> summary = new LinkedHashMap<>();
        summary.put("incident", Map.of("id", incident.id(), "opened_at", incident.openedAt().toString()));
        summary.put("window", Map.of("from", w[0].toString(), "to", w[1].toString()));
        summary.put("tenant", tenant);
        summary.put("requests", requests);
        return bundle(id, tenant, summary, Map.of("disclosures", published), requests, w, tenant);
    }

    /**
     * Two index lookups that cost the same whether or not incident {@code id} exists: does an exposure filed into it
     * name a request of the tenant, or did a published disclosure of it notify the tenant. An incident's exposures are
     * filed by the lineage sweep, so a tenant's slice is there once the sweep has filed what concerns it.
     */
    private boolean mayConcern(long id, String tenant) {
        return jdbc.sql("""
                SELECT EXISTS (SELECT 1 FROM incident_exposures x JOIN requests q
                                   ON q.id = x.reader_request OR q.id = x.exposing_request
                                WHERE x.incident_id = :id AND q.tenant_id = :tenant)
                    OR EXISTS (SELECT 1 FROM tenant_notices n JOIN disclosures d ON d.id = n.disclosure_id
                                WHERE d.incident_id = :id AND n.tenant_id = :tenant)""")
                .param("id", id).param("tenant", tenant).query(Boolean.class).single();
    }

    private byte[] bundle(long id, String tenantOnly, Map<String, Object> summary, Map<String, List<Long>> rows, Set<Long> requests,
                          Instant[] w, String tenant) throws SQLException {
        checkpoints.checkpoint(); // this node's heads signed now, so the exported rows are covered
        Map<String, Object> exported;
        try (Connection c = dataSource.getConnection()) {
            exported = new EvidenceExport(EvidenceConfiguration.TIMEOUT_SECONDS)
                    .export(c, new EvidenceExport.Selection(rows, requests, tenant, w[0], w[1]));
        }
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> exportedRows = (List<Map<String, Object>>) exported.get("rows");
        Map<String, byte[]> files = new LinkedHashMap<>();
        files.put("incident.json", BundleFormat.jsonBytes(summary));
        if (tenantOnly == null) {
            files.put("timeline.json", rowsOf(exportedRows, "incident_entries"));
            files.put("safety_events.json", rowsOf(exportedRows, "safety_events"));
        }
        files.put("disclosures.json", rowsOf(exportedRows, "disclosures"));
        files.put("lineage.json", BundleFormat.jsonBytes(Map.of("rows", exported.get("lineage"))));
        files.put("receipts.json", BundleFormat.jsonBytes(Map.of("receipts", receipts(requests, tenant))));
        Map<String, Object> chains = new LinkedHashMap<>();
        chains.put("links", exported.get("links"));
        chains.put("batches", exported.get("batches"));
        chains.put("batch_row_hashes", exported.get("batch_row_hashes"));
        files.put("chains.json", BundleFormat.jsonBytes(chains));
        files.put("checkpoints.json", BundleFormat.jsonBytes(Map.of("checkpoints", exported.get("checkpoints"))));
        Map<String, Object> about = new LinkedHashMap<>();
        about.put("incident", id);
        if (tenantOnly != null) {
            about.put("tenant", tenantOnly);
        }
        about.put("created_at", clock.instant().toString());
        return BundleFormat.write(files, about, keys, publishedKeys());
    }

    private static byte[] rowsOf(List<Map<String, Object>> rows, String table) {
        return BundleFormat.jsonBytes(Map.of("rows", rows.stream().filter(r -> table.equals(r.get("table"))).toList()));
    }

    private List<Map<String, Object>> receipts(Set<Long> requests, String tenant) {
        return jdbc.sql("SELECT id, public_id, tenant_id, status, receipt FROM requests WHERE id IN (:ids)"
                        + (tenant == null ? "" : " AND tenant_id = :tenant") + " ORDER BY id")
                .param("ids", new ArrayList<>(requests)).param("tenant", tenant)
                .query((rs, i) -> {
                    Map<String, Object> m = new LinkedHashMap<>();
                    m.put("request_id", rs.getLong(1));
                    m.put("public_id", rs.getString(2));
                    m.put("tenant", rs.getString(3));
                    m.put("status", rs.getString(4));
                    m.put("receipt", rs.getString(5));
                    return m;
                }).list();
    }

    /**
     * Every key that chains to the pinned trust (retired ones still verify what they signed; other replicas' sign their
     * checkpoints), each with its place in its chain, so a verifier holding the roots walks to it offline.
     */
    private List<Map<String, Object>> publishedKeys() throws SQLException {
        List<Map<String, Object>> out = new ArrayList<>();
        TrustedKeys trusted = trust.keys();
        for (TrustedKeys.TrustedKey k : trusted.trusted().values()) {
            out.add(PublishedKeys.jwk(k.keyId(), k.key(), k.root(), k.endorsement()));
        }
        return out;
    }

    private static Map<String, Object> incidentView(Incident i) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("id", i.id());
        m.put("title", i.title());
        m.put("model", i.model());
        m.put("node", i.node());
        m.put("worker", i.worker());
        m.put("status", i.status().label());
        m.put("severity", i.severity());
        m.put("opened_at", String.valueOf(i.openedAt()));
        m.put("first_event", String.valueOf(i.firstEvent()));
        m.put("last_event", String.valueOf(i.lastEvent()));
        m.put("resolved_at", String.valueOf(i.resolvedAt()));
        return m;
    }
}
