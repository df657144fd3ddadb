package dev.pagewarden.platform.database;

import org.springframework.jdbc.datasource.DelegatingDataSource;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;

/**
 * The platform's DataSource behind {@link DatabaseAvailability}: while PostgreSQL is known to be down a
 * connection request fails at once (SQLSTATE 08001) instead of waiting out the pool's timeout, so no caller -
 * admin API, admin pages, audit queries, background writers - holds a worker thread on a database that does
 * not answer. After the cool-down one request at a time probes; connection failures open the breaker.
 */
final class GuardedDataSource extends DelegatingDataSource implements AutoCloseable {
    private final DatabaseAvailability availability;

    GuardedDataSource(DataSource target, DatabaseAvailability availability) {
        super(target);
        this.availability = availability;
    }

    @Override
    public Connection getConnection() throws SQLException {
        return guarded(() -> super.getConnection());
    }

    @Override
    public Connection getConnection(String username, String password) throws SQLException {
        return guarded(() -> super.getConnection(username, password));
    }

    /** A connection request not even tried because the database is known down (no new evidence of anything). */
    static final class Refused extends SQLTransientConnectionException {
        Refused(String message) {
            super(message, "08001");
        }
    }

    private interface Open {
        Connection get() throws SQLException;
    }

    private Connection guarded(Open open) throws SQLException {
        if (!availability.tryAcquire()) {
            throw new Refused("PostgreSQL is unreachable (" + availability.lastError()
                    + "); not trying again until the next probe");
        }
        try {
            Connection c = open.get();
            availability.succeeded();
            return c;
        } catch (SQLException | RuntimeException e) {
            if (DatabaseErrors.unavailable(e)) {
                availability.failed(e);
            } else {
                availability.abandon();
            }
            throw e;
        }
    }

    /** Closes the pool behind it (the DataSource bean's destroy method lands here). */
    @Override
    public void close() throws Exception {
        if (getTargetDataSource() instanceof AutoCloseable closeable) {
            closeable.close();
        }
    }
}
