package dev.pagewarden.db.testing;

import javax.sql.DataSource;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A real PostgreSQL 17 for tests: a Testcontainers container when a Docker engine answers, the embedded
 * zonky server otherwise ({@link #start}). The platform's tests reuse this through the db test-jar.
 *
 * <p>{@link #stop()} / {@link #restart()} take the same database away and bring it back with its data
 * (outage tests); {@link #dataSource()} follows the server across a restart. {@link #close()} removes it.
 */
public interface TestPostgres extends AutoCloseable {

    /** Connections to the {@code postgres} database as the superuser; still valid after {@link #restart()}. */
    DataSource dataSource();

    /** The JDBC URL as of now (a container's host port changes across {@link #restart()}). */
    String jdbcUrl();

    String user();

    String password();

    /** "embedded" or "testcontainers". */
    String kind();

    /** Stops the server; its data stays. */
    void stop() throws IOException;

    /** Starts the same cluster again (stopping it first if it runs). */
    void restart() throws IOException;

    @Override
    void close() throws IOException;

    /**
     * Starts one: {@code -Dpagewarden.test.postgres=embedded|testcontainers} forces the kind, the default
     * ({@code auto}) takes Testcontainers when a Docker engine is available. Prints which, once per JVM.
     */
    static TestPostgres start(String name) throws IOException {
        boolean docker = Chooser.useContainers();
        TestPostgres pg = docker ? ContainerPg.start(name) : EmbeddedPg.start(name);
        Chooser.announce(pg);
        return pg;
    }

    /** Whether {@link #start} would take a Testcontainers PostgreSQL in this JVM. */
    static boolean dockerAvailable() {
        return Chooser.useContainers();
    }

    /** The decision, taken once per JVM. */
    final class Chooser {
        private static Boolean containers;
        private static String reason = "";
        private static boolean announced;

        private Chooser() {
        }

        static synchronized boolean useContainers() {
            if (containers == null) {
                containers = decide();
            }
            return containers;
        }

        static synchronized void announce(TestPostgres pg) {
            if (!announced) {
                announced = true;
                System.out.println("test PostgreSQL: " + pg.kind() + " (" + reason + ")");
            }
        }

        private static boolean decide() {
            String forced = System.getProperty("pagewarden.test.postgres", "auto");
            switch (forced) {
                case "embedded" -> {
                    reason = "forced by -Dpagewarden.test.postgres=embedded";
                    return false;
                }
                case "testcontainers" -> {
                    reason = "forced by -Dpagewarden.test.postgres=testcontainers";
                    return true;
                }
                case "auto" -> {
                }
                default -> throw new IllegalArgumentException(
                        "-Dpagewarden.test.postgres must be auto, embedded or testcontainers, not '" + forced + "'");
            }
            try {
                Class.forName("org.testcontainers.DockerClientFactory", false, Chooser.class.getClassLoader());
            } catch (ClassNotFoundException e) {
                reason = "Testcontainers not on the test classpath";
                return false;
            }
            // Testcontainers' own probe tries every strategy and logs errors when none answers; skip it when
            // nothing on this machine even points at a Docker engine, so the usual no-Docker run stays quick and quiet.
            if (!dockerHinted()) {
                reason = "no Docker engine: no DOCKER_HOST, no docker socket, no ~/.testcontainers.properties";
                return false;
            }
            boolean available = ContainerPg.dockerAvailable();
            reason = available ? "Docker engine available" : "Docker hinted but Testcontainers found no working engine";
            return available;
        }

        private static boolean dockerHinted() {
            if (System.getenv("DOCKER_HOST") != null) {
                return true;
            }
            String home = System.getProperty("user.home");
            String runtime = System.getenv("XDG_RUNTIME_DIR");
            Path[] candidates = {
                    Path.of("/var/run/docker.sock"),
                    Path.of(home, ".docker", "run", "docker.sock"),
                    Path.of(home, ".docker", "desktop", "docker.sock"),
                    Path.of(home, ".testcontainers.properties"),
                    runtime == null ? null : Path.of(runtime, "docker.sock"),
                    runtime == null ? null : Path.of(runtime, "podman", "podman.sock"),
            };
            for (Path p : candidates) {
                if (p != null && Files.exists(p)) {
                    return true;
                }
            }
            return false;
        }
    }
}
