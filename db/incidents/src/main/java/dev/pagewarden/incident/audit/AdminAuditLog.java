package dev.pagewarden.incident.audit;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Component;

import java.time.Instant;
import java.util.List;
import java.util.function.LongSupplier;

/** The admin audit table: who did what, when. Every admin action goes through {@link #record}. Blocking. */
@Component
public class AdminAuditLog {
    public record Entry(long id, Instant at, String actor, String action, String target, String details) {
    }

    private final JdbcClient jdbc;
    private final EvidenceChain chain;

    /** A log whose rows no chain links (tests of other services). */
    AdminAuditLog(JdbcClient jdbc) {
        this(jdbc, null);
    }

    @Autowired
    AdminAuditLog(JdbcClient jdbc, EvidenceChain chain) {
        this.jdbc = jdbc;
        this.chain = chain;
    }

    /** Writes the entry and links it into this node's admin-audit chain, in one transaction. */
    public void record(String actor, String action, String target, String details) {
        writeLinked("admin_audit", () -> insert(actor, action, target, details));
    }

    /**
     * Writes one evidence row ({@code insert} returns its id) and links it into this node's chain of
     * {@code table}, in one transaction; returns the id.
     */
    public long writeLinked(String table, LongSupplier insert) {
        if (chain == null) {
            return insert.getAsLong();
        }
        return chain.write(() -> {
            long id = insert.getAsLong();
            link(table, id);
            return id;
        });
    }

    private long insert(String actor, String action, String target, String details) {
        return jdbc.sql("INSERT INTO admin_audit (actor, action, target, details) VALUES (:actor, :action, :target, :details) RETURNING id")
                .param("actor", actor).param("action", action).param("target", target).param("details", details)
                .query(Long.class).single();
    }

    /**
     * Links an evidence row written in the caller's transaction (incident entries, disclosure versions) into
     * this node's chain of its table; nothing for a log without chains.
     */
    public void link(String table, long id) {
        if (chain != null) {
            chain.link(table, id);
        }
    }

    public List<Entry> recent(int limit) {
        return jdbc.sql("SELECT id, at, actor, action, target, details FROM admin_audit ORDER BY id DESC LIMIT :n")
                .param("n", limit)
                .query((rs, i) -> new Entry(rs.getLong(1), rs.getTimestamp(2).toInstant(), rs.getString(3),
                        rs.getString(4), rs.getString(5), rs.getString(6)))
                .list();
    }
}
