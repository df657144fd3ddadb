package dev.pagewarden.platform.security;

import dev.pagewarden.platform.database.BoundedCalls;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * {@link AuthThrottle}'s counts in PostgreSQL ({@code auth_throttle}), shared by every replica. One attempt is
 * one transaction: each key's row is upserted and locked (keys in a fixed order, so two attempts never deadlock),
 * the throttle's rule runs on the rows' counts, and the changed counts are written back - so parallel guesses on
 * different replicas are counted one after the other. Every call is bounded by the {@link BoundedCalls}' timeout.
 */
final class SharedStrikes implements AutoCloseable {
    private static final Comparator<AuthThrottle.Key> ORDER = Comparator.comparing(AuthThrottle.Key::kind)
            .thenComparing(k -> k.scope().name()).thenComparing(AuthThrottle.Key::value);
    private static final String UPSERT = "INSERT INTO auth_throttle (kind, scope, value, touched_at) VALUES (?, ?, ?, ?) "
            + "ON CONFLICT (kind, scope, value) DO UPDATE SET touched_at = EXCLUDED.touched_at "
            + "RETURNING failures, window_start, lockouts, locked_until";
    private static final String UPDATE = "UPDATE auth_throttle SET failures = ?, window_start = ?, lockouts = ?, "
            + "locked_until = ? WHERE kind = ? AND scope = ? AND value = ?";
    /** How often a replica deletes rows nobody touched for long. */
    private static final long PURGE_EVERY_NANOS = Duration.ofMinutes(10).toNanos();

    private final DataSource dataSource;
    private final BoundedCalls calls;
    private final int statementSeconds;
    private volatile long nextPurge = System.nanoTime();

    SharedStrikes(DataSource dataSource, BoundedCalls calls) {
        this.dataSource = dataSource;
        this.calls = calls;
        this.statementSeconds = (int) Math.max(1, (calls.timeout().toMillis() + 999) / 1000);
    }

    /**
     * Loads and locks the keys' counts, lets {@code rule} decide on them (it may change them), writes them back.
     *
     * @param keep rows untouched for this long are deleted now and then
     */
    AuthThrottle.Decision attempt(List<AuthThrottle.Key> keys, Instant now, Duration keep,
                                  Function<Function<AuthThrottle.Key, AuthThrottle.Strikes>, AuthThrottle.Decision> rule)
            throws BoundedCalls.Unavailable {
        purgeNowAndThen(now, keep);
        List<AuthThrottle.Key> ordered = keys.stream().distinct().sorted(ORDER).toList();
        return calls.call(() -> {
            try (Connection c = dataSource.getConnection()) {
                c.setAutoCommit(false);
                try {
                    Map<AuthThrottle.Key, AuthThrottle.Strikes> strikes = new HashMap<>();
                    try (PreparedStatement st = c.prepareStatement(UPSERT)) {
                        st.setQueryTimeout(statementSeconds);
                        for (AuthThrottle.Key key : ordered) {
                            bindKey(st, 1, key);
                            st.setObject(4, time(now));
                            try (ResultSet rs = st.executeQuery()) {
                                rs.next();
                                strikes.put(key, new AuthThrottle.Strikes(rs.getInt(1), instant(rs, 2), rs.getInt(3),
                                        instant(rs, 4)));
                            }
                        }
                    }
                    AuthThrottle.Decision decision = rule.apply(strikes::get);
                    try (PreparedStatement st = c.prepareStatement(UPDATE)) {
                        st.setQueryTimeout(statementSeconds);
                        for (AuthThrottle.Key key : ordered) {
                            AuthThrottle.Strikes s = strikes.get(key);
                            st.setInt(1, s.failures());
                            st.setObject(2, time(s.windowStart()));
                            st.setInt(3, s.lockouts());
                            st.setObject(4, time(s.lockedUntil()));
                            bindKey(st, 5, key);
                            st.addBatch();
                        }
                        st.executeBatch();
                    }
                    c.commit();
                    return decision;
                } catch (SQLException | RuntimeException e) {
                    c.rollback();
                    throw e;
                }
            }
        });
    }

    /** A right attempt: its account starts over, its address gets one strike back; in the background. */
    void succeededLater(List<AuthThrottle.Key> keys) {
        calls.runLater(() -> {
            try (Connection c = dataSource.getConnection();
                 PreparedStatement forget = c.prepareStatement(
                         "DELETE FROM auth_throttle WHERE kind = ? AND scope = ? AND value = ?");
                 PreparedStatement refund = c.prepareStatement("UPDATE auth_throttle SET failures = greatest(0, failures - 1) "
                         + "WHERE kind = ? AND scope = ? AND value = ?")) {
                forget.setQueryTimeout(statementSeconds);
                refund.setQueryTimeout(statementSeconds);
                for (AuthThrottle.Key key : keys) {
                    PreparedStatement st = key.scope() == AuthThrottle.Scope.ACCOUNT ? forget : refund;
                    bindKey(st, 1, key);
                    st.executeUpdate();
                }
            } catch (SQLException e) {
                throw new IllegalStateException(e);
            }
        });
    }

    private void purgeNowAndThen(Instant now, Duration keep) {
        long t = System.nanoTime();
        long due = nextPurge;
        if (t - due < 0) {
            return;
        }
        nextPurge = t + PURGE_EVERY_NANOS;
        calls.runLater(() -> {
            try (Connection c = dataSource.getConnection();
                 PreparedStatement st = c.prepareStatement("DELETE FROM auth_throttle WHERE touched_at < ?")) {
                st.setQueryTimeout(statementSeconds);
                st.setObject(1, time(now.minus(keep)));
                st.executeUpdate();
            } catch (SQLException e) {
                throw new IllegalStateException(e);
            }
        });
    }

    private static void bindKey(PreparedStatement st, int from, AuthThrottle.Key key) throws SQLException {
        st.setString(from, key.kind());
        st.setString(from + 1, key.scope().name().toLowerCase(java.util.Locale.ROOT));
        st.setString(from + 2, stored(key.value()));
    }

    /**
     * The value as PostgreSQL text can hold it: a typed user name may contain NUL, which text refuses (that
     * would read as the database being away). Backslashes doubled, NUL as {@code \0}: distinct values stay distinct.
     */
    static String stored(String value) {
        return value.replace("\\", "\\\\").replace("\0", "\\0");
    }

    private static OffsetDateTime time(Instant i) {
        return i == null ? null : OffsetDateTime.ofInstant(i, ZoneOffset.UTC);
    }

    private static Instant instant(ResultSet rs, int column) throws SQLException {
        OffsetDateTime t = rs.getObject(column, OffsetDateTime.class);
        return t == null ? null : t.toInstant();
    }

    @Override
    public void close() {
        calls.close();
    }
}
