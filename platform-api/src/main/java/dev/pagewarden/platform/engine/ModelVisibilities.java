package dev.pagewarden.platform.engine;

import dev.pagewarden.platform.database.ChangeFeed;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.flyway.autoconfigure.FlywayMigrationInitializer;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Component;

import javax.sql.DataSource;
import java.sql.Timestamp;
import java.time.Clock;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Which models are private, shared by every replica: stored in {@code model_visibility}, read once at start,
 * and kept current through the {@link ChangeFeed} (topic {@value #TOPIC}), so a model taken private on one
 * replica is refused by all of them within a second or so. Answers {@link #isPrivate} from memory.
 */
@Component
public final class ModelVisibilities implements ChangeFeed.Subscriber {
    private static final Logger LOG = LoggerFactory.getLogger(ModelVisibilities.class);
    static final String TOPIC = "visibility";
    /** Seconds any one statement may take. */
    private static final int QUERY_TIMEOUT_S = 5;

    private final JdbcClient jdbc;
    private final Clock clock;
    private final Map<String, Boolean> privateModels = new ConcurrentHashMap<>();

    /** {@code migrated}: the table is read here, so after Flyway has run when Spring runs it. */
    @Autowired
    public ModelVisibilities(DataSource dataSource, ChangeFeed feed, Clock clock,
                             Optional<FlywayMigrationInitializer> migrated) {
        this(dataSource, feed, clock);
    }

    ModelVisibilities(DataSource dataSource, ChangeFeed feed, Clock clock) {
        JdbcTemplate template = new JdbcTemplate(dataSource);
        template.setQueryTimeout(QUERY_TIMEOUT_S);
        this.jdbc = JdbcClient.create(template);
        this.clock = clock;
        resync();
        feed.subscribe(TOPIC, this);
    }

    public boolean isPrivate(String modelId) {
        return privateModels.getOrDefault(modelId, false);
    }

    /**
     * Stores the switch and tells every replica in the same statement (the notification leaves with the commit);
     * this replica applies it at once.
     */
    public ModelVisibility set(String modelId, boolean makePrivate, String actor) {
        ModelVisibility v = new ModelVisibility(modelId, makePrivate, clock.instant(), actor);
        jdbc.sql("""
                        WITH saved AS (
                            INSERT INTO model_visibility (model_id, private, changed_at, changed_by) VALUES (?, ?, ?, ?)
                            ON CONFLICT (model_id) DO UPDATE SET private = EXCLUDED.private,
                                changed_at = EXCLUDED.changed_at, changed_by = EXCLUDED.changed_by
                            RETURNING model_id)
                        SELECT pg_notify(?, ?) FROM saved""")
                .params(modelId, makePrivate, Timestamp.from(v.changedAt()), actor,
                        ChangeFeed.CHANNEL, ChangeFeed.payload(TOPIC, modelId))
                .query().singleRow();
        privateModels.put(modelId, makePrivate);
        return v;
    }

    @Override
    public void resync() {
        Map<String, Boolean> now = new ConcurrentHashMap<>();
        jdbc.sql("SELECT model_id, private FROM model_visibility")
                .query((rs, i) -> now.put(rs.getString(1), rs.getBoolean(2))).list();
        privateModels.keySet().retainAll(now.keySet());
        privateModels.putAll(now);
    }

    @Override
    public void changed(String modelId) {
        boolean nowPrivate = jdbc.sql("SELECT private FROM model_visibility WHERE model_id = ?").param(modelId)
                .query(Boolean.class).optional().orElse(false);
        Boolean before = privateModels.put(modelId, nowPrivate);
        if (before == null || before != nowPrivate) {
            LOG.warn("model '{}' is now {} (changed on another replica)", modelId, nowPrivate ? "PRIVATE" : "public");
        }
    }
}
