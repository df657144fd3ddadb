package dev.pagewarden.db.testing;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.model.ExposedPort;
import com.github.dockerjava.api.model.Ports;
import org.postgresql.ds.PGSimpleDataSource;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.postgresql.PostgreSQLContainer;
import org.testcontainers.utility.DockerImageName;

import javax.sql.DataSource;
import java.io.IOException;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;

/**
 * PostgreSQL 17 in a Testcontainers container. Only loaded when a Docker engine answers, so tests on a
 * machine without Docker (or without Testcontainers on the classpath) never touch these classes.
 * {@link #stop()} stops the container without removing it; {@link #restart()} starts it again (same data,
 * new host port - {@link #dataSource()} looks the port up on every connection).
 */
final class ContainerPg implements TestPostgres {
    private static final String IMAGE = "postgres:17-alpine";
    private static final int PG_PORT = 5432;

    private final PostgreSQLContainer container;
    private volatile int hostPort;

    private ContainerPg(PostgreSQLContainer container) {
        this.container = container;
        this.hostPort = container.getMappedPort(PG_PORT);
    }

    static boolean dockerAvailable() {
        return DockerClientFactory.instance().isDockerAvailable();
    }

    static ContainerPg start(String name) {
        @SuppressWarnings("resource") // closed by close()
        PostgreSQLContainer c = new PostgreSQLContainer(DockerImageName.parse(IMAGE))
                .withDatabaseName("postgres")
                .withUsername("postgres")
                .withPassword("postgres")
                .withCommand("postgres", "-c", "fsync=on", "-c", "max_connections=50")
                .withLabel("dev.pagewarden.test", name);
        c.start();
        return new ContainerPg(c);
    }

    @Override
    public DataSource dataSource() {
        PGSimpleDataSource ds = new PGSimpleDataSource() {
            @Override
            public Connection getConnection(String user, String password) throws SQLException {
                setPortNumbers(new int[] {hostPort});
                return super.getConnection(user, password);
            }
        };
        ds.setServerNames(new String[] {container.getHost()});
        ds.setPortNumbers(new int[] {hostPort});
        ds.setDatabaseName("postgres");
        ds.setUser(user());
        ds.setPassword(password());
        ds.setConnectTimeout(2);
        ds.setSocketTimeout(20);
        return ds;
    }

    @Override
    public String jdbcUrl() {
        return "jdbc:postgresql://" + container.getHost() + ":" + hostPort + "/postgres";
    }

    @Override
    public String user() {
        return container.getUsername();
    }

    @Override
    public String password() {
        return container.getPassword();
    }

    @Override
    public String kind() {
        return "testcontainers " + IMAGE;
    }

    @Override
    public void stop() {
        DockerClient docker = DockerClientFactory.instance().client();
        docker.stopContainerCmd(container.getContainerId()).withTimeout(10).exec();
    }

    @Override
    public void restart() throws IOException {
        DockerClient docker = DockerClientFactory.instance().client();
        String id = container.getContainerId();
        if (Boolean.TRUE.equals(docker.inspectContainerCmd(id).exec().getState().getRunning())) {
            stop();
        }
        docker.startContainerCmd(id).exec();
        Ports.Binding[] bindings = docker.inspectContainerCmd(id).exec().getNetworkSettings().getPorts()
                .getBindings().get(ExposedPort.tcp(PG_PORT));
        hostPort = Integer.parseInt(bindings[0].getHostPortSpec());
        awaitReady(Duration.ofSeconds(60));
    }

    private void awaitReady(Duration timeout) throws IOException {
        long deadline = System.nanoTime() + timeout.toNanos();
        SQLException last = null;
        while (System.nanoTime() < deadline) {
            try (Connection c = dataSource().getConnection()) {
                c.createStatement().execute("SELECT 1");
                return;
            } catch (SQLException e) {
                last = e;
                try {
                    Thread.sleep(100);
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    throw new IOException("interrupted waiting for the restarted container", ie);
                }
            }
        }
        throw new IOException("PostgreSQL container did not accept connections within " + timeout, last);
    }

    @Override
    public void close() {
        container.stop();
    }
}
