package dev.pagewarden.platform.database;

import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Changes that every replica must see at once (a model taken private, a revoked key), carried by PostgreSQL's
 * {@code NOTIFY} on one channel and received here on a dedicated connection that {@code LISTEN}s, read by a
 * daemon thread of its own (never an event loop). A payload is {@code topic:detail}; each topic has one
 * {@link Subscriber}.
 *
 * <p>Notifications sent while the connection is down are lost, so after every (re)connect, once the
 * {@code LISTEN} is in place, each subscriber re-reads its full state ({@link Subscriber#resync()}); a failed
 * connection is retried with a doubling backoff. An idle connection is pinged, so a dead one is noticed within
 * about {@code poll} plus the connection's socket timeout.
 */
public final class ChangeFeed implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ChangeFeed.class);
    /** The channel every replica listens on. */
    public static final String CHANNEL = "pagewarden_changes";

    /** Opens a new connection that this feed owns (not one borrowed from the pool: it is held for good). */
    @FunctionalInterface
    public interface Connector {
        Connection open() throws SQLException;
    }

    /** One topic's receiver; both run on the feed's thread and may call the database (with a timeout). */
    public interface Subscriber {
        /** Re-reads the full state: after the first connect and after every reconnect. */
        void resync();

        /** Applies one change; {@code detail} is the part of the payload after {@code topic:}. */
        void changed(String detail);
    }

    private final Connector connector;
    private final Duration poll;
    private final Duration maxBackoff;
    private final Map<String, Subscriber> subscribers = new ConcurrentHashMap<>();
    private final Thread thread;
    private volatile boolean running;
    private volatile Connection current;
    private volatile long connects;

    /**
     * @param poll       how long one wait for notifications lasts; also how often an idle connection is pinged
     * @param maxBackoff the longest pause between reconnect attempts
     */
    public ChangeFeed(Connector connector, Duration poll, Duration maxBackoff) {
        if (poll.isNegative() || poll.isZero() || maxBackoff.compareTo(poll) < 0) {
            throw new IllegalArgumentException("poll must be positive and maxBackoff at least poll: " + poll + ", " + maxBackoff);
        }
        this.connector = connector;
        this.poll = poll;
        this.maxBackoff = maxBackoff;
        this.thread = Thread.ofPlatform().name("change-feed").daemon().unstarted(this::run);
    }

    /** Registers the receiver of one topic; before {@link #start()}. */
    public void subscribe(String topic, Subscriber subscriber) {
        if (topic.isEmpty() || topic.contains(":")) {
            throw new IllegalArgumentException("a topic is a non-empty name without ':': '" + topic + "'");
        }
        if (subscribers.putIfAbsent(topic, subscriber) != null) {
            throw new IllegalStateException("topic '" + topic + "' already has a subscriber");
        }
    }

    public synchronized void start() {
        if (!running) {
            running = true;
            thread.start();
        }
    }

    /** How many times the feed has connected (and re-synced); for tests and the log. */
    public long connects() {
        return connects;
    }

    /** The payload {@code NOTIFY} carries for a change of {@code detail} in {@code topic}. */
    public static String payload(String topic, String detail) {
        return topic + ":" + detail;
    }

    private void run() {
        long backoffMillis = 0;
        while (running) {
            if (backoffMillis > 0) {
                try {
                    Thread.sleep(backoffMillis);
                } catch (InterruptedException e) {
                    return;
                }
            }
            try (Connection c = connector.open()) {
                current = c;
                try (Statement s = c.createStatement()) {
                    s.execute("LISTEN " + CHANNEL);
                }
                // LISTEN first, then re-read: a change committed in between is applied twice, never missed
                subscribers.values().forEach(Subscriber::resync);
                connects++;
                if (backoffMillis > 0) {
                    LOG.info("change feed reconnected to PostgreSQL; state re-read");
                }
                backoffMillis = 0;
                listen(c);
            } catch (SQLException | RuntimeException e) {
                if (!running) {
                    return;
                }
                backoffMillis = backoffMillis == 0 ? 100 : Math.min(backoffMillis * 2, maxBackoff.toMillis());
                LOG.warn("change feed lost its PostgreSQL connection ({}); retrying in {} ms - until then changes "
                        + "made on other replicas are not seen here", e.toString(), backoffMillis);
            } finally {
                current = null;
            }
        }
    }

    private void listen(Connection c) throws SQLException {
        PGConnection pg = c.unwrap(PGConnection.class);
        int pollMillis = (int) poll.toMillis();
        while (running) {
            PGNotification[] batch = pg.getNotifications(pollMillis);
            if (batch == null || batch.length == 0) {
                ping(c); // a silently dead connection throws here, not in the wait
                continue;
            }
            for (PGNotification n : batch) {
                dispatch(n.getParameter());
            }
        }
    }

    private static void ping(Connection c) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.setQueryTimeout(5);
            s.execute("SELECT 1");
        }
    }

    private void dispatch(String payload) {
        int colon = payload.indexOf(':');
        Subscriber s = colon < 0 ? null : subscribers.get(payload.substring(0, colon));
        if (s == null) {
            LOG.debug("change feed: no subscriber for '{}'", payload);
            return;
        }
        // a failure here (the database went away mid-read) ends the connection: the reconnect re-reads everything
        s.changed(payload.substring(colon + 1));
    }

    @Override
    public void close() {
        running = false;
        Connection c = current;
        if (c != null) {
            try {
                c.close();
            } catch (SQLException e) {
                LOG.debug("closing the change feed's connection", e);
            }
        }
        thread.interrupt();
        try {
            thread.join(Duration.ofSeconds(5));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
