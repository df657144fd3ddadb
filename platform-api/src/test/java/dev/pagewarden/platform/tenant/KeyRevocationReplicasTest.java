package dev.pagewarden.platform.tenant;

import dev.pagewarden.platform.database.ChangeFeed;
import dev.pagewarden.platform.database.DatabaseAvailability;
import dev.pagewarden.platform.testing.PlatformTest;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.MediaType;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import javax.sql.DataSource;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;

import static dev.pagewarden.platform.testing.Deadline.await;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A key cached by this platform is refused within 2 seconds once another replica (a second {@link TenantService}
 * on the same PostgreSQL) revokes it; and a revocation whose notification was lost (written while this
 * platform's change feed was not listening) is applied by the re-sync after the feed's connection is cut.
 */
class KeyRevocationReplicasTest extends PlatformTest {
    @Autowired
    TenantRepository tenants;
    @Autowired
    ApiKeyRepository keys;
    @Autowired
    PlatformTransactionManager transactions;
    @Autowired
    DataSource dataSource;
    @Autowired
    JdbcClient jdbc;

    private int status(String key) {
        return as(key).post().uri("/v1/completions").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("model", MODEL, "prompt", "hi", "max_tokens", 1)).exchange()
                .returnResult(String.class).getStatus().value();
    }

    @Test
    void aKeyRevokedOnAnotherReplicaIsRefusedHereWithinTwoSeconds() {
        String[] tenant = newTenant("revoked-elsewhere");
        assertThat(status(tenant[1])).as("used once, so cached here").isEqualTo(200);
        // the other replica publishes only; its own feed never needs to connect
        ChangeFeed otherFeed = new ChangeFeed(() -> {
            throw new SQLException("not listening", "08001");
        }, Duration.ofMillis(100), Duration.ofMillis(100));
        TenantService other = new TenantService(tenants, keys, Clock.systemUTC(), transactions,
                new DatabaseAvailability(), dataSource, otherFeed, new TenantDefaults(8, 100_000));
        new TransactionTemplate(transactions).executeWithoutResult(
                s -> other.revokeKey(tenant[0], tenant[1].substring(0, 13)));

        await(() -> status(tenant[1]) == 401, Duration.ofSeconds(2), "the revoked key refused on this replica");
    }

    @Test
    void aRevocationMissedWhileTheFeedWasDisconnectedIsAppliedByTheReSync() {
        String[] tenant = newTenant("revoked-unheard");
        assertThat(status(tenant[1])).isEqualTo(200);
        // revoked with no notification, as if it had been sent while this replica was not listening
        jdbc.sql("UPDATE api_keys SET revoked_at = now() WHERE prefix = ?").param(tenant[1].substring(0, 13)).update();
        assertThat(status(tenant[1])).as("still cached: nothing told this replica").isEqualTo(200);

        int cut = jdbc.sql("SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) FROM pg_stat_activity "
                + "WHERE application_name = 'pagewarden-change-feed'").query(Integer.class).single();
        assertThat(cut).as("the platform's listening connection").isOne();

        await(() -> status(tenant[1]) == 401, Duration.ofSeconds(10), "the key refused after the re-sync");
    }
}
