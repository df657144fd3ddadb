package dev.pagewarden.db.testing;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import org.postgresql.ds.PGSimpleDataSource;

import javax.sql.DataSource;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

/**
 * A real PostgreSQL 17 (zonky embedded binaries) for tests, data directory under {@code target/embedded-pg}.
 * {@link #stop()} / {@link #restart()} keep the data directory and port, so a test can take the database
 * away mid-stream and bring the same one back; {@link #close()} stops it and deletes the directory.
 */
public final class EmbeddedPg implements TestPostgres {
    private final Path dataDir;
    private int port;
    private EmbeddedPostgres pg;

    private EmbeddedPg(Path dataDir) {
        this.dataDir = dataDir;
    }

    public static EmbeddedPg start(String name) throws IOException {
        Path dir = Path.of("target", "embedded-pg", name + "-" + ProcessHandle.current().pid() + "-" + System.nanoTime())
                .toAbsolutePath();
        Files.createDirectories(dir.getParent());
        EmbeddedPg e = new EmbeddedPg(dir);
        e.pg = e.builder(true).start();
        e.port = e.pg.getPort();
        return e;
    }

    private EmbeddedPostgres.Builder builder(boolean fresh) {
        EmbeddedPostgres.Builder b = EmbeddedPostgres.builder()
                .setDataDirectory(dataDir)
                .setCleanDataDirectory(false)
                .setPGStartupWait(Duration.ofSeconds(60))
                .setServerConfig("fsync", "on")
                .setServerConfig("max_connections", "50");
        if (!fresh) {
            b.setPort(port);
        }
        return b;
    }

    @Override
    public DataSource dataSource() {
        PGSimpleDataSource ds = new PGSimpleDataSource();
        ds.setUrl(jdbcUrl());
        ds.setUser("postgres");
        ds.setConnectTimeout(2);
        ds.setSocketTimeout(20);
        return ds;
    }

    public int port() {
        return port;
    }

    @Override
    public String jdbcUrl() {
        return "jdbc:postgresql://localhost:" + port + "/postgres";
    }

    @Override
    public String user() {
        return "postgres";
    }

    /** Empty: the embedded cluster trusts local connections. */
    @Override
    public String password() {
        return "";
    }

    @Override
    public String kind() {
        return "embedded zonky PostgreSQL 17";
    }

    /** Stops the server (fast shutdown); the data directory stays. */
    @Override
    public void stop() throws IOException {
        if (pg != null) {
            pg.close();
            pg = null;
        }
    }

    /** Starts the same cluster again on the same port. */
    @Override
    public void restart() throws IOException {
        stop();
        pg = builder(false).start();
    }

    @Override
    public void close() throws IOException {
        stop();
        deleteRecursively(dataDir);
    }

    private static void deleteRecursively(Path p) throws IOException {
        if (!Files.exists(p)) {
            return;
        }
        try (var s = Files.walk(p)) {
            for (Path x : s.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(x);
            }
        }
    }
}
