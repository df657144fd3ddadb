package dev.pagewarden.adminui.web;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;
import org.springframework.web.server.WebSession;
import org.springframework.web.server.session.WebSessionStore;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

import javax.sql.DataSource;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InvalidClassException;
import java.io.ObjectInputFilter;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.io.Serializable;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.sql.Timestamp;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Admin UI sessions in PostgreSQL ({@code admin_sessions}), so that every replica knows every session: a
 * restart or a load balancer switching replica keeps the admin logged in. JDBC runs on the given bounded
 * scheduler, never on an event-loop thread, and every call has a time limit (the statement's and the
 * reactive one). Rows are keyed by the SHA-256 of the session id; a session id changes on login (Spring
 * Security's fixation protection calls {@link WebSession#changeSessionId()}), which deletes the old row.
 *
 * <p>Attributes (the security context, the CSRF token) are stored in Java serialization: they are Spring
 * Security's own serializable types, and a JSON mapping would need a hand-kept mapping of each of them. They
 * are read back through an {@link ObjectInputFilter} that admits only JDK value and collection types and
 * Spring Security's, with bounded depth, references and size, so a row written by anyone else cannot make
 * the reader instantiate arbitrary classes.
 */
public final class PostgresWebSessionStore implements WebSessionStore {
    private static final Logger LOG = LoggerFactory.getLogger(PostgresWebSessionStore.class);
    private static final ObjectInputFilter ALLOWED = ObjectInputFilter.Config.createFilter(
            "maxdepth=20;maxrefs=2000;maxbytes=65536;maxarray=4096;"
                    + "java.lang.*;java.util.*;java.time.*;org.springframework.security.**;!*");

    private final JdbcClient jdbc;
    private final TransactionTemplate tx;
    private final Clock clock;
    private final Duration defaultMaxIdle;
    private final Duration timeout;
    private final Scheduler scheduler;
    private final SecureRandom random;

    /**
     * @param defaultMaxIdle a new session's idle limit
     * @param timeout        the most one database call may take (whole seconds for the statement)
     * @param scheduler      where the JDBC calls run (bounded)
     */
    public PostgresWebSessionStore(DataSource dataSource, Clock clock, Duration defaultMaxIdle, Duration timeout, Scheduler scheduler) {
        JdbcTemplate template = new JdbcTemplate(dataSource);
        template.setQueryTimeout((int) Math.max(1, timeout.toSeconds()));
        this.jdbc = JdbcClient.create(template);
        this.tx = new TransactionTemplate(new DataSourceTransactionManager(dataSource));
        this.clock = clock;
        this.defaultMaxIdle = defaultMaxIdle;
        this.timeout = timeout;
        this.scheduler = scheduler;
        try {
            this.random = SecureRandom.getInstance("DRBG");
            random.nextBytes(new byte[16]); // seeds now, never on a request thread
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("no DRBG SecureRandom in this JDK", e);
        }
    }

    private <T> Mono<T> blocking(String what, Callable<T> call) {
        return Mono.fromCallable(call).subscribeOn(scheduler).timeout(timeout)
                .onErrorMap(java.util.concurrent.TimeoutException.class,
                        e -> new IllegalStateException("admin session store: " + what + " took longer than " + timeout, e));
    }

    @Override
    public Mono<WebSession> createWebSession() {
        return Mono.just(new Session(newId(), clock.instant(), null, Map.of()));
    }

    @Override
    public Mono<WebSession> retrieveSession(String id) {
        return blocking("read", () -> load(id).orElse(null));
    }

    /** The live session with this id, its last access now; a session past its idle limit is deleted instead. */
    Optional<WebSession> load(String id) {
        Instant now = clock.instant();
        record Row(Instant created, Instant lastAccess, int maxIdleSeconds, Instant expires, byte[] attributes) {
        }
        Optional<Row> row = jdbc.sql("SELECT created_at, last_access, max_idle_seconds, expires_at, attributes FROM admin_sessions "
                        + "WHERE id_hash = :h")
                .param("h", hash(id))
                .query((rs, i) -> new Row(rs.getTimestamp(1).toInstant(), rs.getTimestamp(2).toInstant(), rs.getInt(3),
                        rs.getTimestamp(4).toInstant(), rs.getBytes(5)))
                .optional();
        if (row.isEmpty()) {
            return Optional.empty();
        }
        if (!row.get().expires().isAfter(now)) {
            delete(id);
            return Optional.empty();
        }
        Map<String, Object> attributes;
        try {
            attributes = deserialize(row.get().attributes());
        } catch (IOException | ClassNotFoundException e) {
            LOG.warn("admin session row refused ({}); the session is dropped", e.getMessage());
            delete(id);
            return Optional.empty();
        }
        Session s = new Session(id, row.get().created(), id, attributes);
        s.maxIdle = Duration.ofSeconds(row.get().maxIdleSeconds());
        s.lastAccess = now;
        s.started = true;
        return Optional.of(s);
    }

    @Override
    public Mono<Void> removeSession(String id) {
        return blocking("delete", () -> delete(id)).then();
    }

    private int delete(String id) {
        return jdbc.sql("DELETE FROM admin_sessions WHERE id_hash = :h").param("h", hash(id)).update();
    }

    @Override
    public Mono<WebSession> updateLastAccessTime(WebSession session) {
        return Mono.fromSupplier(() -> {
            ((Session) session).lastAccess = clock.instant();
            return session;
        });
    }

    /** Deletes every session past its idle limit; returns how many. Run periodically (any replica may). */
    public int removeExpired() {
        return jdbc.sql("DELETE FROM admin_sessions WHERE expires_at <= :now").param("now", Timestamp.from(clock.instant())).update();
    }

    private String newId() {
        byte[] bytes = new byte[32];
        random.nextBytes(bytes);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
    }

    private static byte[] hash(String id) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(id.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    static byte[] serialize(Map<String, Object> attributes) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
            HashMap<String, Object> copy = new HashMap<>();
            attributes.forEach((k, v) -> {
                if (v instanceof Serializable) {
                    copy.put(k, v);
                } else {
                    LOG.warn("admin session attribute {} ({}) is not serializable and is not kept", k, v.getClass().getName());
                }
            });
            out.writeObject(copy);
        } catch (IOException e) {
            throw new IllegalStateException("admin session attributes could not be serialized: " + e.getMessage(), e);
        }
        return bytes.toByteArray();
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> deserialize(byte[] data) throws IOException, ClassNotFoundException {
        try (ObjectInputStream in = new ObjectInputStream(new ByteArrayInputStream(data))) {
            in.setObjectInputFilter(ALLOWED);
            Object o = in.readObject();
            if (!(o instanceof HashMap<?, ?> map)) {
                throw new InvalidClassException("not a session attribute map: " + o.getClass().getName());
            }
            return new ConcurrentHashMap<>((Map<String, Object>) map);
        }
    }

    /** One session; its row is written on {@link #save()} (the session manager calls it before each response). */
    private final class Session implements WebSession {
        private volatile String id;
        /** The id its row is stored under, null until first saved. */
        private volatile String storedId;
        private final Instant created;
        private final Map<String, Object> attributes;
        private volatile Instant lastAccess;
        private volatile Duration maxIdle = defaultMaxIdle;
        private volatile boolean started;
        private volatile boolean invalid;

        Session(String id, Instant created, String storedId, Map<String, Object> attributes) {
            this.id = id;
            this.created = created;
            this.lastAccess = created;
            this.storedId = storedId;
            this.attributes = new ConcurrentHashMap<>(attributes);
        }

        @Override
        public String getId() {
            return id;
        }

        @Override
        public Map<String, Object> getAttributes() {
            return attributes;
        }

        @Override
        public void start() {
            started = true;
        }

        @Override
        public boolean isStarted() {
            return started || !attributes.isEmpty();
        }

        /** A new id at once: the old row is deleted now, the new one written on save. */
        @Override
        public Mono<Void> changeSessionId() {
            String old = storedId;
            id = newId();
            storedId = null;
            return old == null ? Mono.empty() : blocking("rotate", () -> delete(old)).then();
        }

        @Override
        public Mono<Void> invalidate() {
            invalid = true;
            started = false;
            attributes.clear();
            String old = storedId;
            storedId = null;
            return old == null ? Mono.empty() : blocking("invalidate", () -> delete(old)).then();
        }

        @Override
        public Mono<Void> save() {
            if (invalid || !isStarted()) {
                return Mono.empty();
            }
            String now = id;
            String previous = storedId;
            byte[] data = serialize(attributes);
            Instant access = lastAccess;
            Duration idle = maxIdle;
            Instant expires = idle.isNegative() ? Instant.parse("9999-12-31T00:00:00Z") : access.plus(idle);
            return blocking("save", () -> tx.execute(status -> {
                if (now.equals(previous)) {
                    // only ever an update: a session logged out elsewhere meanwhile stays deleted
                    return jdbc.sql("""
                            UPDATE admin_sessions SET last_access = :access, max_idle_seconds = :idle, expires_at = :expires,
                              attributes = :data WHERE id_hash = :h""")
                            .param("h", hash(now)).param("access", Timestamp.from(access))
                            .param("idle", (int) Math.min(Integer.MAX_VALUE, idle.toSeconds())).param("expires", Timestamp.from(expires))
                            .param("data", data).update();
                }
                if (previous != null) {
                    delete(previous);
                }
                return jdbc.sql("""
                        INSERT INTO admin_sessions (id_hash, created_at, last_access, max_idle_seconds, expires_at, attributes)
                        VALUES (:h, :created, :access, :idle, :expires, :data)""")
                        .param("h", hash(now)).param("created", Timestamp.from(created)).param("access", Timestamp.from(access))
                        .param("idle", (int) Math.min(Integer.MAX_VALUE, idle.toSeconds())).param("expires", Timestamp.from(expires))
                        .param("data", data).update();
            })).doOnSuccess(rows -> {
                if (rows == 0) {
                    invalid = true; // deleted by a logout (or expiry) on another replica: not brought back
                } else {
                    storedId = now;
                }
            }).then();
        }

        @Override
        public boolean isExpired() {
            return invalid || !maxIdle.isNegative() && !clock.instant().isBefore(lastAccess.plus(maxIdle));
        }

        @Override
        public Instant getCreationTime() {
            return created;
        }

        @Override
        public Instant getLastAccessTime() {
            return lastAccess;
        }

        @Override
        public void setMaxIdleTime(Duration maxIdleTime) {
            this.maxIdle = maxIdleTime;
        }

        @Override
        public Duration getMaxIdleTime() {
            return maxIdle;
        }
    }
}
