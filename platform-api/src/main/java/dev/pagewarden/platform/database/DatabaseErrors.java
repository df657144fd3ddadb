package dev.pagewarden.platform.database;

import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.dao.QueryTimeoutException;
import org.springframework.dao.TransientDataAccessResourceException;
import org.springframework.transaction.CannotCreateTransactionException;

import java.net.SocketTimeoutException;
import java.sql.SQLException;
import java.sql.SQLNonTransientConnectionException;
import java.sql.SQLTimeoutException;
import java.sql.SQLTransientConnectionException;
import java.util.concurrent.TimeoutException;

/** Tells "PostgreSQL cannot be reached or did not answer in time" apart from other database errors. */
public final class DatabaseErrors {
    private DatabaseErrors() {
    }

    /** True when the breaker refused the call without trying ({@link GuardedDataSource}). */
    static boolean refused(Throwable error) {
        for (Throwable t = error; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof GuardedDataSource.Refused) {
                return true;
            }
        }
        return false;
    }

    /**
     * True when {@code error} or one of its causes says the database is unreachable, refused the connection
     * or timed out (connection pool timeout, socket timeout, statement timeout, SQLSTATE class 08 or 57P0x).
     * Constraint violations and bad SQL are not unavailability.
     */
    public static boolean unavailable(Throwable error) {
        for (Throwable t = error; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof CannotCreateTransactionException || t instanceof DataAccessResourceFailureException
                    || t instanceof TransientDataAccessResourceException || t instanceof QueryTimeoutException
                    || t instanceof SQLTransientConnectionException || t instanceof SQLNonTransientConnectionException
                    || t instanceof SQLTimeoutException || t instanceof SocketTimeoutException
                    || t instanceof TimeoutException) {
                return true;
            }
            if (t instanceof SQLException sql && sql.getSQLState() != null
                    && (sql.getSQLState().startsWith("08") || sql.getSQLState().startsWith("57P0")
                    || sql.getSQLState().equals("57014"))) {
                return true;
            }
        }
        return false;
    }
}
