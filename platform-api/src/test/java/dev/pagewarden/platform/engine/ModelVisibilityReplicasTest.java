package dev.pagewarden.platform.engine;

import dev.pagewarden.db.embedded.EmbeddedPostgresServer;
import dev.pagewarden.db.schema.Migrations;
import dev.pagewarden.platform.database.ChangeFeed;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static dev.pagewarden.platform.testing.Deadline.await;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two replicas' visibility switches over one real PostgreSQL, each with its own change feed: a model taken
 * private through one is private on the other within 2 seconds; a change made while the other's feed
 * connection is gone (terminated by the server) is picked up by the re-sync after it reconnects.
 */
class ModelVisibilityReplicasTest {
    private static final Duration WITHIN = Duration.ofSeconds(2);
    @TempDir
    static Path tmp;
    private static EmbeddedPostgresServer pg;

    @BeforeAll
    static void start() throws Exception {
        pg = EmbeddedPostgresServer.start(EmbeddedPostgresServer.Config.defaults().withDataDirectory(tmp.resolve("pg")));
        Migrations.migrate(pg.dataSource());
    }

    @AfterAll
    static void stop() throws Exception {
        pg.close();
    }

    /** A replica's feed connector that can be made to fail, to hold the feed disconnected. */
    private static final class Connector implements ChangeFeed.Connector {
        final String name;
        final AtomicBoolean refuse = new AtomicBoolean();
        final AtomicInteger refused = new AtomicInteger();

        Connector(String name) {
            this.name = name;
        }

        @Override
        public Connection open() throws SQLException {
            if (refuse.get()) {
                refused.incrementAndGet();
                throw new SQLException("connection refused (test)", "08001");
            }
            Properties p = new Properties();
            p.setProperty("user", pg.user());
            p.setProperty("password", pg.password());
            p.setProperty("ApplicationName", name);
            p.setProperty("connectTimeout", "3");
            p.setProperty("socketTimeout", "10");
            return DriverManager.getConnection(pg.jdbcUrl(), p);
        }
    }

    @Test
    void aSwitchOnOneReplicaReachesTheOtherAndALostConnectionIsReSynced() throws Exception {
        Connector connectorA = new Connector("replica-a-feed");
        Connector connectorB = new Connector("replica-b-feed");
        try (ChangeFeed feedA = new ChangeFeed(connectorA, Duration.ofMillis(200), Duration.ofMillis(400));
             ChangeFeed feedB = new ChangeFeed(connectorB, Duration.ofMillis(200), Duration.ofMillis(400))) {
            ModelVisibilities a = new ModelVisibilities(pg.dataSource(), feedA, Clock.systemUTC());
            ModelVisibilities b = new ModelVisibilities(pg.dataSource(), feedB, Clock.systemUTC());
            feedA.start();
            feedB.start();
            await(() -> feedA.connects() > 0 && feedB.connects() > 0, Duration.ofSeconds(10), "both feeds listening");

            a.set("m1", true, "alice");
            assertThat(a.isPrivate("m1")).as("at once on the replica that changed it").isTrue();
            await(() -> b.isPrivate("m1"), WITHIN, "m1 private on replica B");
            b.set("m1", false, "bob");
            await(() -> !a.isPrivate("m1"), WITHIN, "m1 public again on replica A");

            // B's connection dies and stays down while A takes m2 private: that notification never reaches B
            connectorB.refuse.set(true);
            long connectsBefore = feedB.connects();
            assertThat(terminate("replica-b-feed")).as("B's listening backend found and terminated").isOne();
            await(() -> connectorB.refused.get() > 0, Duration.ofSeconds(10), "B's feed to notice and retry");
            a.set("m2", true, "alice");
            assertThat(storedPrivate("m2")).isTrue();
            assertThat(b.isPrivate("m2")).as("not heard while disconnected").isFalse();

            connectorB.refuse.set(false);
            await(() -> feedB.connects() > connectsBefore, Duration.ofSeconds(10), "B's feed to reconnect");
            assertThat(b.isPrivate("m2")).as("re-synced from the table on reconnect").isTrue();
            assertThat(b.isPrivate("m1")).isFalse();

            // and it listens again
            a.set("m2", false, "alice");
            await(() -> !b.isPrivate("m2"), WITHIN, "m2 public again on replica B after the reconnect");
        }
    }

    private static int terminate(String applicationName) throws SQLException {
        try (Connection c = pg.dataSource().getConnection();
             PreparedStatement s = c.prepareStatement(
                     "SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = ?")) {
            s.setQueryTimeout(5);
            s.setString(1, applicationName);
            try (ResultSet rs = s.executeQuery()) {
                rs.next();
                return rs.getInt(1);
            }
        }
    }

    private static boolean storedPrivate(String model) throws SQLException {
        try (Connection c = pg.dataSource().getConnection();
             PreparedStatement s = c.prepareStatement("SELECT private FROM model_visibility WHERE model_id = ?")) {
            s.setQueryTimeout(5);
            s.setString(1, model);
            try (ResultSet rs = s.executeQuery()) {
                return rs.next() && rs.getBoolean(1);
            }
        }
    }
}
