package dev.pagewarden.incident.retention;

import dev.pagewarden.incident.audit.AdminAuditLog;
import dev.pagewarden.incident.input.InvalidTextException;
import dev.pagewarden.incident.input.StoredText;
import dev.pagewarden.incident.input.Times;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.RowMapper;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Service;
import org.springframework.transaction.support.TransactionTemplate;

import javax.sql.DataSource;
import java.sql.Timestamp;
import java.time.Clock;
import java.time.Instant;
import java.time.LocalDate;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeParseException;
import java.util.List;
import java.util.NoSuchElementException;

/**
 * Legal holds on lineage: while a hold is active, partition maintenance keeps every {@code kv_lineage} day
 * partition that overlaps it, however old. Adding and releasing are written to the admin audit. Blocking.
 */
@Service
public class LegalHoldService {
    private static final int QUERY_TIMEOUT_S = 5;
    private static final RowMapper<LegalHold> ROW = (rs, i) -> new LegalHold(rs.getLong("id"), ts(rs.getTimestamp("hold_from")),
            ts(rs.getTimestamp("hold_to")), rs.getString("reason"), ts(rs.getTimestamp("created_at")), rs.getString("created_by"),
            ts(rs.getTimestamp("released_at")), rs.getString("released_by"));

    private final JdbcClient jdbc;
    private final AdminAuditLog audit;
    private final TransactionTemplate tx;
    private final Clock clock;

    public LegalHoldService(DataSource dataSource, AdminAuditLog audit, TransactionTemplate tx, Clock clock) {
        JdbcTemplate template = new JdbcTemplate(dataSource);
        template.setQueryTimeout(QUERY_TIMEOUT_S);
        this.jdbc = JdbcClient.create(template);
        this.audit = audit;
        this.tx = tx;
        this.clock = clock;
    }

    /** Active holds first, then released ones; newest first within each. */
    public List<LegalHold> list() {
        return jdbc.sql("SELECT * FROM legal_holds ORDER BY (released_at IS NOT NULL), id DESC").query(ROW).list();
    }

    public LegalHold get(long id) {
        return jdbc.sql("SELECT * FROM legal_holds WHERE id = :id").param("id", id).query(ROW).optional()
                .orElseThrow(() -> new NoSuchElementException("no legal hold " + id));
    }

    /** Places a hold on [from, to); {@code reason} is required (a case or request reference). */
    public LegalHold add(Instant from, Instant to, String reason, String actor) {
        if (from == null) {
            throw new InvalidTextException("from", "from is required (an ISO-8601 time such as 2026-03-01T00:00:00Z, or a date)");
        }
        if (to == null) {
            throw new InvalidTextException("to", "to is required (an ISO-8601 time such as 2026-03-15T00:00:00Z, or a date)");
        }
        if (!from.isBefore(to)) {
            throw new InvalidTextException("to", "to (" + to + ") must be after from (" + from + ")");
        }
        String checked = StoredText.requireLine("reason", reason, 500);
        return tx.execute(s -> {
            long id = jdbc.sql("""
                    INSERT INTO legal_holds (hold_from, hold_to, reason, created_at, created_by)
                    VALUES (:from, :to, :reason, :now, :by) RETURNING id""")
                    .param("from", Timestamp.from(from)).param("to", Timestamp.from(to)).param("reason", checked)
                    .param("now", Timestamp.from(clock.instant())).param("by", actor).query(Long.class).single();
            audit.record(actor, "legal-hold.add", "legal hold " + id, from + " .. " + to + ": " + checked);
            return get(id);
        });
    }

    /** Releases an active hold: the next partition maintenance may drop what it alone kept. */
    public LegalHold release(long id, String actor) {
        return tx.execute(s -> {
            LegalHold hold = jdbc.sql("SELECT * FROM legal_holds WHERE id = :id FOR UPDATE").param("id", id).query(ROW).optional()
                    .orElseThrow(() -> new NoSuchElementException("no legal hold " + id));
            if (!hold.active()) {
                throw new IllegalArgumentException("legal hold " + id + " was already released at " + hold.releasedAt()
                        + " by " + hold.releasedBy());
            }
            jdbc.sql("UPDATE legal_holds SET released_at = :now, released_by = :by WHERE id = :id")
                    .param("now", Timestamp.from(clock.instant())).param("by", actor).param("id", id).update();
            audit.record(actor, "legal-hold.release", "legal hold " + id, hold.from() + " .. " + hold.to() + ": " + hold.reason());
            return get(id);
        });
    }

    /**
     * A hold bound as a user writes it: an ISO-8601 instant ({@code 2026-03-01T00:00:00Z}), a time with an
     * offset, or a date (its start, UTC); null or blank is null. Anything else is refused naming the field.
     */
    public static Instant parseTime(String field, String value) {
        if (value == null || value.isBlank()) {
            return null;
        }
        String v = value.strip();
        try {
            if (v.length() == 10) {
                return Times.inRange(field, LocalDate.parse(v).atStartOfDay(ZoneOffset.UTC).toInstant());
            }
            return Times.inRange(field, OffsetDateTime.parse(v).toInstant());
        } catch (DateTimeParseException e) {
            throw new InvalidTextException(field, field + " must be an ISO-8601 time such as 2026-03-01T00:00:00Z or a date "
                    + "such as 2026-03-01, got '" + (v.length() > 40 ? v.substring(0, 40) + "..." : v) + "'");
        }
    }

    private static Instant ts(Timestamp t) {
        return t == null ? null : t.toInstant();
    }
}
