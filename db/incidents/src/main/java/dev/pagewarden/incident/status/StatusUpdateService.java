package dev.pagewarden.incident.status;

import dev.pagewarden.incident.audit.AdminAuditLog;
import dev.pagewarden.incident.input.StoredText;
import org.springframework.jdbc.core.RowMapper;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Service;
import org.springframework.transaction.support.TransactionTemplate;

import java.sql.Timestamp;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;

/**
 * Public status updates of incidents: an admin posts one (state, headline, text); /status and its feeds show
 * them. Posting is public at once and final (a database trigger refuses any change); the lifecycle only moves
 * forward ({@link PublicState#mayFollow}).
 */
@Service
public class StatusUpdateService {
    private static final RowMapper<StatusUpdate> ROW = (rs, i) -> new StatusUpdate(rs.getLong("id"), rs.getLong("incident_id"),
            PublicState.valueOf(rs.getString("state")), rs.getString("title"), rs.getString("body"),
            rs.getTimestamp("posted_at").toInstant(), rs.getString("posted_by"));

    private final JdbcClient jdbc;
    private final AdminAuditLog audit;
    private final TransactionTemplate tx;
    private final Clock clock;

    public StatusUpdateService(JdbcClient jdbc, AdminAuditLog audit, TransactionTemplate tx, Clock clock) {
        this.jdbc = jdbc;
        this.audit = audit;
        this.tx = tx;
        this.clock = clock;
    }

    /** Posts an update; refused when the incident does not exist or the state would go back. */
    public StatusUpdate post(long incidentId, PublicState state, String title, String body, String actor) {
        String checkedTitle = StoredText.requireLine("title", title, 300);
        String checkedBody = StoredText.requireMultiline("text", body, 20_000);
        return tx.execute(s -> {
            // the incident's row lock orders concurrent posts, so each sees the one before it
            jdbc.sql("SELECT id FROM incidents WHERE id = :i FOR UPDATE").param("i", incidentId).query(Long.class)
                    .optional().orElseThrow(() -> new NoSuchElementException("no incident " + incidentId));
            PublicState previous = updates(incidentId).stream().findFirst().map(StatusUpdate::state).orElse(null);
            if (!state.mayFollow(previous)) {
                throw new IllegalArgumentException(previous == PublicState.RESOLVED
                        ? "incident " + incidentId + " is resolved on the status page and takes no more updates"
                        : "incident " + incidentId + " is " + previous.label() + " on the status page and cannot go back to "
                        + state.label());
            }
            long id = jdbc.sql("""
                    INSERT INTO status_updates (incident_id, state, title, body, posted_at, posted_by)
                    VALUES (:i, :s, :t, :b, :now, :by) RETURNING id""")
                    .param("i", incidentId).param("s", state.name()).param("t", checkedTitle).param("b", checkedBody)
                    .param("now", Timestamp.from(clock.instant())).param("by", actor).query(Long.class).single();
            audit.record(actor, "status.update", "incident " + incidentId, state.label() + ": " + checkedTitle);
            return jdbc.sql("SELECT * FROM status_updates WHERE id = :id").param("id", id).query(ROW).single();
        });
    }

    /** An incident's updates, newest first. */
    public List<StatusUpdate> updates(long incidentId) {
        return jdbc.sql("SELECT * FROM status_updates WHERE incident_id = :i ORDER BY id DESC").param("i", incidentId)
                .query(ROW).list();
    }

    /** Every incident with at least one update, the most recently updated first: what /status lists. */
    public List<PublicIncident> incidents() {
        Map<Long, List<StatusUpdate>> byIncident = new LinkedHashMap<>();
        for (StatusUpdate u : jdbc.sql("SELECT * FROM status_updates ORDER BY id DESC").query(ROW).list()) {
            byIncident.computeIfAbsent(u.incidentId(), k -> new ArrayList<>()).add(u);
        }
        return byIncident.entrySet().stream().map(e -> new PublicIncident(e.getKey(), e.getValue()))
                .sorted(Comparator.comparing((PublicIncident p) -> p.latest().id()).reversed()).toList();
    }
}
