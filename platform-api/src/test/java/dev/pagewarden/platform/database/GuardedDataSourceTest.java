package dev.pagewarden.platform.database;

import org.junit.jupiter.api.Test;
import org.postgresql.ds.PGSimpleDataSource;

import java.net.ServerSocket;
import java.sql.SQLException;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Against a real PostgreSQL driver and a port where nothing listens (a server that is gone). */
class GuardedDataSourceTest {
    private final AtomicLong now = new AtomicLong(1_000);
    private final DatabaseAvailability availability = new DatabaseAvailability(now::get);

    @Test
    void aFailedConnectionOpensTheBreakerThenRequestsAreRefusedWithoutTryingUntilTheProbe() throws Exception {
        GuardedDataSource ds = new GuardedDataSource(unreachable(), availability);

        assertThatThrownBy(ds::getConnection).isInstanceOf(SQLException.class)
                .isNotInstanceOf(GuardedDataSource.Refused.class);
        assertThat(availability.knownDown()).isTrue();
        assertThat(availability.refusing()).isTrue();

        assertThatThrownBy(ds::getConnection).isInstanceOf(GuardedDataSource.Refused.class)
                .hasMessageContaining("PostgreSQL is unreachable")
                .satisfies(e -> assertThat(DatabaseErrors.unavailable(e)).as("answered as database_unavailable").isTrue());

        // a refusal is no new failure: it does not push the next probe further out
        availability.failed(new SQLException("wrapped", new GuardedDataSource.Refused("refused")));
        now.addAndGet(DatabaseAvailability.COOLDOWN.toNanos());
        assertThat(availability.refusing()).isFalse();

        // the probe really tries the server again (and, still failing, re-opens the breaker)
        assertThatThrownBy(ds::getConnection).isInstanceOf(SQLException.class)
                .isNotInstanceOf(GuardedDataSource.Refused.class);
        assertThat(availability.refusing()).isTrue();
    }

    private static PGSimpleDataSource unreachable() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        PGSimpleDataSource ds = new PGSimpleDataSource();
        ds.setUrl("jdbc:postgresql://127.0.0.1:" + port + "/postgres");
        ds.setConnectTimeout(3);
        ds.setUser("postgres");
        return ds;
    }
}
