package dev.pagewarden.adminui.audit;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Component;

import java.time.Instant;
import java.util.List;

/** The admin audit table: who did what, when. Every admin action goes through {@link #record}. Blocking. */
@Component
public class AdminAuditLog {
    public record Entry(long id, Instant at, String actor, String action, String target, String details) {
    }

    private final JdbcClient jdbc;

    AdminAuditLog(JdbcClient jdbc) {
        this.jdbc = jdbc;
    }

    public void record(String actor, String action, String target, String details) {
        jdbc.sql("INSERT INTO admin_audit (actor, action, target, details) VALUES (:actor, :action, :target, :details)")
                .param("actor", actor).param("action", action).param("target", target).param("details", details)
                .update();
    }

    public List<Entry> recent(int limit) {
        return jdbc.sql("SELECT id, at, actor, action, target, details FROM admin_audit ORDER BY id DESC LIMIT :n")
                .param("n", limit)
                .query((rs, i) -> new Entry(rs.getLong(1), rs.getTimestamp(2).toInstant(), rs.getString(3),
                        rs.getString(4), rs.getString(5), rs.getString(6)))
                .list();
    }
}
