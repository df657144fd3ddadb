package dev.pagewarden.incident.disclosure;

import dev.pagewarden.db.audit.BlastRadius;
import dev.pagewarden.incident.PlatformPort;
import dev.pagewarden.incident.audit.AdminAuditLog;
import dev.pagewarden.incident.incident.FrozenBlastRadiusService;
import dev.pagewarden.incident.incident.Incident;
import dev.pagewarden.incident.incident.IncidentService;
import dev.pagewarden.incident.input.StoredText;
import org.springframework.jdbc.core.RowCallbackHandler;
import org.springframework.jdbc.core.RowMapper;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Service;
import org.springframework.transaction.support.TransactionTemplate;

import java.sql.Timestamp;
import java.time.Clock;
import java.time.Instant;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;

/**
 * The disclosure workflow: draft (pre-filled from the incident and its lineage blast radius), review,
 * publish. Publishing is final (a database trigger refuses any change to a published row); a
 * correction is a new version. Publishing creates one notice per affected tenant - exactly the
 * tenants the lineage names, exposed or receiving - and hands them to the webhook sender.
 */
@Service
public class DisclosureService {
    private static final RowMapper<Disclosure> ROW = (rs, i) -> new Disclosure(rs.getLong("id"), rs.getLong("incident_id"),
            rs.getInt("version"), Disclosure.Status.valueOf(rs.getString("status")), rs.getString("title"),
            rs.getString("body"), ts(rs.getTimestamp("created_at")), rs.getString("created_by"),
            rs.getString("reviewed_by"), ts(rs.getTimestamp("published_at")), rs.getString("published_by"));

    private final JdbcClient jdbc;
    private final IncidentService incidents;
    private final PlatformPort platform;
    private final AdminAuditLog audit;
    private final WebhookService webhooks;
    private final DisclosureReviews reviews;
    private final TransactionTemplate tx;
    private final Clock clock;
    private final FrozenBlastRadiusService frozen;

    DisclosureService(JdbcClient jdbc, IncidentService incidents, PlatformPort platform, AdminAuditLog audit,
                      WebhookService webhooks, DisclosureReviews reviews, TransactionTemplate tx, Clock clock,
                      FrozenBlastRadiusService frozen) {
        this.jdbc = jdbc;
        this.incidents = incidents;
        this.platform = platform;
        this.audit = audit;
        this.webhooks = webhooks;
        this.reviews = reviews;
        this.tx = tx;
        this.clock = clock;
        this.frozen = frozen;
    }

    public List<Disclosure> versions(long incidentId) {
        return jdbc.sql("SELECT * FROM disclosures WHERE incident_id = :i ORDER BY version DESC").param("i", incidentId)
                .query(ROW).list();
    }

    public List<Disclosure> all() {
        return jdbc.sql("SELECT * FROM disclosures ORDER BY incident_id DESC, version DESC").query(ROW).list();
    }

    public Disclosure get(long id) {
        return jdbc.sql("SELECT * FROM disclosures WHERE id = :id").param("id", id).query(ROW).optional()
                .orElseThrow(() -> new NoSuchElementException("no disclosure " + id));
    }

    /** The latest published version of each incident, newest first: what /status shows. */
    public List<Disclosure> published() {
        return jdbc.sql("""
                SELECT DISTINCT ON (incident_id) * FROM disclosures WHERE status = 'PUBLISHED'
                ORDER BY incident_id, version DESC""").query(ROW).list().stream()
                .sorted((a, b) -> b.publishedAt().compareTo(a.publishedAt())).toList();
    }

    /**
     * The open draft of an incident's disclosure, or a new version: the first pre-filled from the
     * incident, a correction starting from the latest published text.
     */
    public Disclosure draft(long incidentId, String actor) {
        return tx.execute(s -> {
            Incident incident = incidents.get(incidentId);
            List<Disclosure> versions = versions(incidentId);
            Optional<Disclosure> open = versions.stream().filter(Disclosure::editable).findFirst();
            if (open.isPresent()) {
                return open.get();
            }
            int version = versions.isEmpty() ? 1 : versions.getFirst().version() + 1;
            String title = versions.isEmpty() ? "Incident " + incidentId + ": " + incident.title()
                    : versions.getFirst().title();
            String body = versions.isEmpty() ? prefill(incident)
                    : "**Correction (version " + version + "):** describe what changed.\n\n" + versions.getFirst().body();
            long id = jdbc.sql("""
                    INSERT INTO disclosures (incident_id, version, status, title, body, created_at, created_by)
                    VALUES (:i, :v, 'DRAFT', :t, :b, :now, :by) RETURNING id""")
                    .param("i", incidentId).param("v", version).param("t", title).param("b", body)
                    .param("now", Timestamp.from(clock.instant())).param("by", actor).query(Long.class).single();
            audit.link("disclosures", id);
            audit.record(actor, "disclosure.draft", "incident " + incidentId, "version " + version);
            return get(id);
        });
    }

    /**
     * The draft's starting text: when (the first and last exposed read; the searched window when the lineage shows
     * none), scope from lineage, cause, remediation, what customers should do.
     */
    String prefill(Incident incident) {
        BlastRadius r = incidents.blastRadius(incident);
        Instant[] searched = incidents.window(incident);
        Instant[] w = IncidentService.exposureWindow(r).map(e -> new Instant[] {e.firstRead(), e.lastRead()}).orElse(searched);
        Set<String> affected = new TreeSet<>(r.exposedTenants());
        affected.addAll(r.readerTenants());
        String detectors = incidents.timeline(incident.id()).stream().filter(e -> e.kind().equals("DETECTOR"))
                .map(e -> e.actor().replace("detector:", "")).distinct().reduce((a, b) -> a + ", " + b).orElse("none");
        return """
                ## Summary
                Between %s and %s (UTC), %s.

                ## Scope (computed from the request lineage)
                - Responses that read another customer's KV data: **%d** (of which delivered to the client: **%d**)
                - Customers whose data was read by others: **%d**
                - Customers who received responses computed over others' data: **%d**
                - Affected customers are notified individually; if you received no notice, you were not affected.

                ## Cause
                _Describe the root cause._

                ## Remediation
                The model was taken out of service while we investigated. _Describe the fix and how it was verified._

                ## What you should do
                Review the notice sent to your account: it lists the affected request ids. Treat the listed responses as
                unreliable, and if they may have contained sensitive prompts, rotate any secrets included in them.
                """.formatted(w[0], w[1], incident.node().equals(IncidentService.REPORT_NODE)
                        ? "a KV-cache isolation fault was suspected in a report from outside"
                        : "a KV-cache isolation fault on model `%s` (node `%s`, worker `%s`) was detected by: %s"
                                .formatted(incident.model(), incident.node(), incident.worker(), detectors),
                r.affectedResponses(),
                r.deliveredResponses(), r.exposedTenants().size(), r.readerTenants().size());
    }

    public Disclosure edit(long id, String title, String body, String actor) {
        String checkedTitle = StoredText.requireLine("title", title, 300);
        StoredText.requireMultiline("body", body, 100_000); // stored as written: Markdown may mean its whitespace
        return tx.execute(s -> {
            Disclosure d = requireEditable(id);
            // an edit after review needs a new review
            jdbc.sql("UPDATE disclosures SET title = :t, body = :b, status = 'DRAFT', reviewed_by = NULL WHERE id = :id")
                    .param("t", checkedTitle).param("b", body).param("id", id).update();
            reviews.recordAuthor(id, actor);
            audit.link("disclosures", id);
            audit.record(actor, "disclosure.edit", "disclosure " + id, "incident " + d.incidentId() + " v" + d.version());
            return get(id);
        });
    }

    public Disclosure submitForReview(long id, String actor) {
        return tx.execute(s -> {
            Disclosure d = requireEditable(id);
            if (d.status() != Disclosure.Status.DRAFT) {
                throw new IllegalArgumentException("disclosure " + id + " is already in review");
            }
            // reviewed_by is set by an approval (DisclosureReviews), not by asking for one
            jdbc.sql("UPDATE disclosures SET status = 'IN_REVIEW' WHERE id = :id").param("id", id).update();
            audit.link("disclosures", id);
            audit.record(actor, "disclosure.review", "disclosure " + id, null);
            return get(id);
        });
    }

    /** A review of the version's current text by {@code actor} (four eyes: never one of its authors). */
    public Disclosure approve(long id, String actor) {
        return reviews.approve(id, actor, this);
    }

    /** Publishes a reviewed version, then notices exactly the affected tenants and sends their webhooks. */
    public Disclosure publish(long id, String actor) {
        Disclosure published = reviews.audited(actor, id, () -> tx.execute(s -> {
            Disclosure d = requirePublishable(id);
            Instant now = clock.instant();
            jdbc.sql("UPDATE disclosures SET status = 'PUBLISHED', published_at = :now, published_by = :by WHERE id = :id")
                    .param("now", Timestamp.from(now)).param("by", actor).param("id", id).update();
            freezeBlastRadius(d);
            Map<String, String> affected = affectedTenants(incidents.get(d.incidentId()));
            for (var e : affected.entrySet()) {
                jdbc.sql("""
                        INSERT INTO tenant_notices (disclosure_id, tenant_id, created_at, relation) VALUES (:d, :t, :now, :rel)""")
                        .param("d", id).param("t", e.getKey()).param("now", Timestamp.from(now)).param("rel", e.getValue())
                        .update();
            }
            audit.link("disclosures", id); // after the lineage query: the chain's lock is held until commit
            audit.record(actor, "disclosure.publish", "disclosure " + id,
                    "incident " + d.incidentId() + " v" + d.version() + ", " + affected.size() + " tenant notice(s)");
            incidents.note(d.incidentId(), "disclosure v" + d.version() + " published; " + affected.size()
                    + " affected tenant(s) notified", actor);
            return get(id);
        }));
        webhooks.deliverAll(id);
        return published;
    }

    /** The publish checks, in order: four eyes, still editable, reviewed, no template placeholders left. */
    private Disclosure requirePublishable(long id) {
        reviews.requirePublishable(id, this);
        Disclosure d = requireEditable(id);
        if (d.status() != Disclosure.Status.IN_REVIEW) {
            throw new IllegalArgumentException("disclosure " + id + " must be reviewed before it is published");
        }
        Placeholders.requireNone(d, "published");
        return d;
    }

    /** What publishing would do now, for the confirmation: the tenants it would notify. */
    public record PublishPlan(Disclosure disclosure, Map<String, String> affectedTenants) {
    }

    /**
     * Runs the publish checks without publishing (nothing written, nothing audited) and says what a publish would
     * do; throws what {@link #publish} would throw.
     */
    public PublishPlan planPublish(long id) {
        return tx.execute(s -> {
            Disclosure d = requirePublishable(id);
            PublishPlan plan = new PublishPlan(d, affectedTenants(incidents.get(d.incidentId())));
            s.setRollbackOnly();
            return plan;
        });
    }

    /** Stores and signs the affected set with the version being published (same transaction). */
    private void freezeBlastRadius(Disclosure d) {
        frozen.freeze(d.id(), d.version(), incidents.get(d.incidentId()));
    }

    /** Tenant id -> exposed / received / exposed+received, from the lineage blast radius; only tenants the platform knows. */
    Map<String, String> affectedTenants(Incident incident) {
        BlastRadius r = incidents.blastRadius(incident);
        Set<String> known = new TreeSet<>(platform.tenants().stream().map(PlatformPort.Tenant::id).toList());
        Map<String, String> out = new LinkedHashMap<>();
        for (String t : r.exposedTenants()) {
            if (known.contains(t)) {
                out.put(t, "exposed");
            }
        }
        for (String t : r.readerTenants()) {
            if (known.contains(t)) {
                out.merge(t, "received", (a, b) -> "exposed+received");
            }
        }
        return out;
    }

    /** Locks the disclosure's row first, so an edit racing a publish waits for it and then sees it published. */
    private Disclosure requireEditable(long id) {
        jdbc.sql("SELECT id FROM disclosures WHERE id = :id FOR UPDATE").param("id", id).query(Long.class).optional();
        Disclosure d = get(id);
        if (!d.editable()) {
            throw new IllegalArgumentException("disclosure " + id + " is published and cannot change; draft a correction");
        }
        return d;
    }

    /** A tenant's notice, as the tenant API shows it. */
    /**
     * @param requests         the tenant's responses that were computed over another tenant's KV data
     * @param exposedRequests  the tenant's requests whose KV data another tenant's request read
     */
    public record Notice(long id, long incidentId, int version, String title, String body, String relation,
                         Instant publishedAt, List<Long> requests, List<Long> exposedRequests, Map<Long, String> responseIds) {

        public Notice {
            responseIds = Map.copyOf(responseIds);
        }

        /** The ids the tenant was given for {@code ids} ({@code cmpl-...}, {@code chatcmpl-...}), where it was given one. */
        public List<String> responseIdsOf(List<Long> ids) {
            return ids.stream().map(responseIds::get).filter(Objects::nonNull).toList();
        }
    }

    /**
     * The tenant's own notices, newest first, each with the tenant's own affected request ids: from the blast
     * radius frozen at publication, or (versions published before it was kept) from the lineage.
     */
    public List<Notice> notices(String tenantId) {
        record Row(long disclosureId, Notice notice) {
        }
        return jdbc.sql("""
                SELECT n.id, d.incident_id, d.version, d.title, d.body, n.relation, d.published_at, d.id
                FROM tenant_notices n JOIN disclosures d ON d.id = n.disclosure_id
                WHERE n.tenant_id = :t ORDER BY n.id DESC""").param("t", tenantId)
                .query((rs, i) -> new Row(rs.getLong(8), new Notice(rs.getLong(1), rs.getLong(2), rs.getInt(3), rs.getString(4),
                        rs.getString(5), rs.getString(6), ts(rs.getTimestamp(7)), List.of(), List.of(), Map.of())))
                .list().stream().map(r -> frozen.requestsOf(r.disclosureId(), tenantId)
                        .map(f -> withRequests(r.notice(), tenantId, f.read(), f.exposed()))
                        .orElseGet(() -> withRequests(r.notice(), tenantId))).toList();
    }

    private Notice withRequests(Notice n, String tenantId, List<Long> read, List<Long> exposed) {
        return new Notice(n.id(), n.incidentId(), n.version(), n.title(), n.body(), n.relation(), n.publishedAt(), read, exposed,
                responseIds(tenantId, read, exposed));
    }

    /** The tenant's own requests' public ids, as the tenant was given them (prefix + public part). */
    private Map<Long, String> responseIds(String tenantId, List<Long> read, List<Long> exposed) {
        List<Long> ids = Stream.concat(read.stream(), exposed.stream()).distinct().toList();
        Map<Long, String> out = new HashMap<>();
        if (!ids.isEmpty()) {
            jdbc.sql("""
                    SELECT id, coalesce(public_prefix, 'cmpl-') || public_id FROM requests
                    WHERE id IN (:ids) AND tenant_id = :t AND public_id IS NOT NULL""")
                    .param("ids", ids).param("t", tenantId)
                    .query((RowCallbackHandler) rs -> out.put(rs.getLong(1), rs.getString(2)));
        }
        return out;
    }

    /** The tenant's own request ids on each side, from the lineage of the incident window (never another tenant's). */
    private Notice withRequests(Notice n, String tenantId) {
        Incident incident = incidents.get(n.incidentId());
        BlastRadius r = incidents.blastRadius(incident);
        List<Long> mine = r.responses().stream().filter(x -> tenantId.equals(x.readerTenant()))
                .map(BlastRadius.AffectedResponse::readerRequest).sorted().toList();
        List<Long> exposed = incidents.exposures(incident).stream().filter(e -> tenantId.equals(e.exposedTenant()))
                .map(dev.pagewarden.db.audit.Exposure::exposingRequest).distinct().sorted().toList();
        return withRequests(n, tenantId, mine, exposed);
    }

    public record NoticeRow(long id, String tenantId, String relation, String deliveryStatus, Integer attempts,
                            String lastError) {
    }

    /** The notices of a disclosure with their webhook delivery status, for the disclosure page. */
    public List<NoticeRow> noticeRows(long disclosureId) {
        return jdbc.sql("""
                SELECT n.id, n.tenant_id, n.relation, w.status, w.attempts, w.last_error
                FROM tenant_notices n LEFT JOIN webhook_deliveries w ON w.notice_id = n.id
                WHERE n.disclosure_id = :d ORDER BY n.tenant_id""").param("d", disclosureId)
                .query((rs, i) -> new NoticeRow(rs.getLong(1), rs.getString(2), rs.getString(3), rs.getString(4),
                        (Integer) rs.getObject(5), rs.getString(6)))
                .list();
    }

    private static Instant ts(Timestamp t) {
        return t == null ? null : t.toInstant();
    }
}
