package dev.pagewarden.incident.audit;

import dev.pagewarden.incident.input.Paging;
import org.springframework.jdbc.core.RowMapper;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Component;

import java.sql.Timestamp;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The admin audit log filtered, newest first: one page for the page, all of it (up to a cap) for the CSV. Blocking. */
@Component
public class AdminAuditQuery {
    private static final RowMapper<AdminAuditLog.Entry> ENTRY = (rs, i) -> new AdminAuditLog.Entry(rs.getLong(1),
            rs.getTimestamp(2).toInstant(), rs.getString(3), rs.getString(4), rs.getString(5), rs.getString(6));
    private static final String COLUMNS = "SELECT id, at, actor, action, target, details FROM admin_audit";

    private final JdbcClient jdbc;

    AdminAuditQuery(JdbcClient jdbc) {
        this.jdbc = jdbc;
    }

    public Paging.Page<AdminAuditLog.Entry> page(AdminAuditFilter filter, Paging paging) {
        Map<String, Object> p = new LinkedHashMap<>();
        String where = where(filter, p);
        long total = jdbc.sql("SELECT count(*) FROM admin_audit" + where).params(p).query(Long.class).single();
        List<AdminAuditLog.Entry> rows = jdbc.sql(COLUMNS + where + " ORDER BY id DESC LIMIT :limit OFFSET :offset").params(p)
                .param("limit", paging.size()).param("offset", paging.offset()).query(ENTRY).list();
        return new Paging.Page<>(rows, total, paging);
    }

    public List<AdminAuditLog.Entry> all(AdminAuditFilter filter, int max) {
        Map<String, Object> p = new LinkedHashMap<>();
        String where = where(filter, p);
        return jdbc.sql(COLUMNS + where + " ORDER BY id DESC LIMIT :limit").params(p).param("limit", max).query(ENTRY).list();
    }

    /** The distinct actions recorded so far (the filter's choices). */
    public List<String> actions() {
        return jdbc.sql("SELECT DISTINCT action FROM admin_audit ORDER BY action").query(String.class).list();
    }

    private static String where(AdminAuditFilter f, Map<String, Object> p) {
        StringBuilder sql = new StringBuilder(" WHERE true");
        if (f.actor() != null) {
            sql.append(" AND actor = :actor");
            p.put("actor", f.actor());
        }
        if (f.action() != null) {
            // "incident" matches incident.status and incident.note; the dot keeps "incident" from matching "incidents.x"
            sql.append(" AND (action = :action OR starts_with(action, :actionPrefix))");
            p.put("action", f.action());
            p.put("actionPrefix", f.action().endsWith(".") ? f.action() : f.action() + ".");
        }
        if (f.from() != null) {
            sql.append(" AND at >= :from");
            p.put("from", Timestamp.from(f.from()));
        }
        if (f.to() != null) {
            sql.append(" AND at < :to");
            p.put("to", Timestamp.from(f.to()));
        }
        return sql.toString();
    }
}
