package dev.pagewarden.adminui.audit;

import dev.pagewarden.adminui.web.Csv;
import dev.pagewarden.core.receipt.Receipt;
import dev.pagewarden.db.audit.Exposure;
import dev.pagewarden.db.audit.LineageQueries;
import dev.pagewarden.db.audit.ReceiptAudit;
import dev.pagewarden.db.audit.RequestLineage;
import dev.pagewarden.incident.input.Times;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Service;

import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Optional;

/** The operator's audit questions: one request's lineage and receipt, and the exposure finder over a window. */
@Service
public class AuditService {
    static final Duration MAX_WINDOW = Duration.ofDays(31);

    private final JdbcClient jdbc;
    private final LineageQueries lineage;
    private final ReceiptAudit receipts;

    AuditService(JdbcClient jdbc, LineageQueries lineage, ReceiptAudit receipts) {
        this.jdbc = jdbc;
        this.lineage = lineage;
        this.receipts = receipts;
    }

    public record RequestView(long id, Map<String, Object> row, RequestLineage lineage, ReceiptAudit.Verdict verdict) {
    }

    public RequestView request(String asked) {
        long id = engineId(asked);
        Optional<Map<String, Object>> row = jdbc.sql("""
                SELECT id, tenant_id, model, status, error_code, finish_reason, prompt_tokens, generated_tokens,
                       received_at, finished_at, receipt FROM requests WHERE id = :id""").param("id", id).query().listOfRows()
                .stream().findFirst();
        try {
            RequestLineage reads = lineage.requestLineage(id);
            if (row.isEmpty() && reads.reads().isEmpty()) {
                throw new NoSuchElementException("no request " + asked + " in the requests table or the lineage");
            }
            ReceiptAudit.Verdict verdict = null;
            Object receipt = row.map(r -> r.get("receipt")).orElse(null);
            if (receipt instanceof String compact) {
                // bound to the row it was found in: a receipt copied from another request proves nothing about this one
                Map<String, Object> r = row.orElseThrow();
                verdict = receipts.verify(Receipt.fromCompact(compact),
                        new ReceiptAudit.Row(id, (String) r.get("tenant_id"), (String) r.get("model")));
            }
            return new RequestView(id, row.orElse(Map.of()), reads, verdict);
        } catch (SQLException e) {
            throw new IllegalStateException("lineage query failed: " + e.getMessage(), e);
        }
    }

    /** Exposures in [from, to) on {@code node}'s pool {@code worker}; a blank node or worker means all. */
    public List<Exposure> exposures(Instant from, Instant to, String node, String worker) {
        if (!to.isAfter(from)) {
            throw new IllegalArgumentException("'to' must be after 'from'");
        }
        if (Duration.between(from, to).compareTo(MAX_WINDOW) > 0) {
            throw new IllegalArgumentException("the window may span at most 31 days");
        }
        try {
            return lineage.exposures(from, to, orNull(node), orNull(worker));
        } catch (SQLException e) {
            throw new IllegalStateException("exposure finder failed: " + e.getMessage(), e);
        }
    }

    private static String orNull(String filter) {
        return filter == null || filter.isBlank() ? null : filter.strip();
    }

    /** Exposures as CSV (RFC 4180 quoting), one row per exposure. */
    public static String csv(List<Exposure> exposures) {
        Csv csv = new Csv("read_at", "node", "worker", "page", "read_epoch", "reader_request", "reader_tenant",
                "exposing_request", "exposed_tenant", "writer_epoch", "slots", "written_at");
        for (Exposure e : exposures) {
            csv.row(e.readAt(), e.node(), e.worker(), e.page(), e.readEpoch(), e.readerRequest(), e.readerTenant(),
                    e.exposingRequest(), e.exposedTenant(), e.writerEpoch(), e.slots(), e.writtenAt());
        }
        return csv.toString();
    }

    /** Accepts ISO instants (2026-11-30T05:00:00Z) and the browser's datetime-local form (taken as UTC). */
    public static Instant parseTime(String name, String value) {
        return Times.parse(name, value);
    }

    /**
     * The id as asked, without its {@code cmpl-}/{@code chatcmpl-} prefix: the id a tenant was given
     * (random letters and digits) or the engine's request number; anything else is refused.
     */
    static String checkRequestId(String asked) {
        String s = asked == null ? "" : asked.strip();
        String bare = dev.pagewarden.incident.TenantRequestIds.bare(s);
        if (!bare.matches("[0-9A-Za-z]{1,64}") || bare.chars().allMatch(Character::isDigit) && bare.length() > 18) {
            throw new IllegalArgumentException("'" + asked + "' is not a request id (the id a tenant was given, "
                    + "cmpl-/chatcmpl-/resp_..., or the engine's request number)");
        }
        return bare;
    }

    /** The engine's id of the request: a number is one already; a tenant's id is looked up in {@code requests}. */
    private long engineId(String asked) {
        String bare = checkRequestId(asked);
        if (bare.chars().allMatch(Character::isDigit)) {
            return Long.parseLong(bare);
        }
        return jdbc.sql("SELECT id FROM requests WHERE public_id = :p").param("p", bare).query(Long.class).optional()
                .orElseThrow(() -> new NoSuchElementException("no request " + asked + " in the requests table"));
    }

}
