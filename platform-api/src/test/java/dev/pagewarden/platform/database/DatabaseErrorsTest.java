package dev.pagewarden.platform.database;

import org.junit.jupiter.api.Test;
import org.springframework.dao.DataIntegrityViolationException;
import org.springframework.jdbc.BadSqlGrammarException;
import org.springframework.transaction.CannotCreateTransactionException;

import java.net.SocketTimeoutException;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;

import static org.assertj.core.api.Assertions.assertThat;

class DatabaseErrorsTest {
    @Test
    void unreachableAndTimedOutAreUnavailability() {
        assertThat(DatabaseErrors.unavailable(new CannotCreateTransactionException("no connection",
                new SQLTransientConnectionException("pool timed out after 3000ms")))).isTrue();
        assertThat(DatabaseErrors.unavailable(new RuntimeException(new SQLException("I/O error", "08006",
                new SocketTimeoutException("Read timed out"))))).isTrue();
        assertThat(DatabaseErrors.unavailable(new SQLException("canceling statement due to statement timeout", "57014")))
                .isTrue();
        assertThat(DatabaseErrors.unavailable(new SQLException("terminating connection", "57P01"))).isTrue();
    }

    @Test
    void otherDatabaseErrorsAreNot() {
        assertThat(DatabaseErrors.unavailable(new DataIntegrityViolationException("duplicate key",
                new SQLException("duplicate key", "23505")))).isFalse();
        assertThat(DatabaseErrors.unavailable(new BadSqlGrammarException("select", "SELEC 1",
                new SQLException("syntax error", "42601")))).isFalse();
        assertThat(DatabaseErrors.unavailable(new IllegalStateException("bug"))).isFalse();
    }
}
