package dev.pagewarden.db.embedded;

import dev.pagewarden.db.schema.Migrations;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.postgresql.ds.PGSimpleDataSource;

import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The platform's embedded default: a persistent cluster that keeps its rows across restarts. */
class EmbeddedPostgresServerTest {
    @TempDir
    Path tmp;

    @Test
    void aRowWrittenBeforeAStopIsThereAfterTheNextStartOnTheSameDirectory() throws Exception {
        EmbeddedPostgresServer.Config config = EmbeddedPostgresServer.Config.defaults().withDataDirectory(tmp.resolve("pg"));
        String password;
        try (EmbeddedPostgresServer first = EmbeddedPostgresServer.start(config)) {
            assertThat(first.createdCluster()).isTrue();
            assertThat(first.jdbcUrl()).isEqualTo("jdbc:postgresql://localhost:" + first.port() + "/postgres");
            password = first.password();
            assertThat(password).hasSizeGreaterThan(20);
            assertThat(Migrations.migrate(first.dataSource())).isPositive();
            try (Connection c = DriverManager.getConnection(first.jdbcUrl(), first.user(), first.password());
                 Statement s = c.createStatement()) {
                s.execute("CREATE TABLE survivor (id int PRIMARY KEY, note text)");
                s.execute("INSERT INTO survivor VALUES (1, 'written before the restart')");
                try (ResultSet rs = s.executeQuery("SHOW fsync")) {
                    rs.next();
                    assertThat(rs.getString(1)).isEqualTo("on");
                }
                try (ResultSet rs = s.executeQuery("SHOW synchronous_commit")) {
                    rs.next();
                    assertThat(rs.getString(1)).isEqualTo("on");
                }
            }
            // zonky's "trust" is gone: a wrong password is refused
            assertThatThrownBy(() -> DriverManager.getConnection(first.jdbcUrl(), "postgres", "wrong").close())
                    .isInstanceOf(SQLException.class).hasMessageContaining("password authentication failed");
        }
        Path dataDir = tmp.resolve("pg");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(
                dataDir.resolve(EmbeddedPostgresServer.PASSWORD_FILE)))).isEqualTo("rw-------");

        try (EmbeddedPostgresServer again = EmbeddedPostgresServer.start(config)) {
            assertThat(again.createdCluster()).isFalse();
            assertThat(again.password()).isEqualTo(password);
            PGSimpleDataSource ds = (PGSimpleDataSource) again.dataSource();
            try (Connection c = ds.getConnection(); Statement s = c.createStatement();
                 ResultSet rs = s.executeQuery("SELECT note FROM survivor WHERE id = 1")) {
                assertThat(rs.next()).isTrue();
                assertThat(rs.getString(1)).isEqualTo("written before the restart");
            }
            assertThat(Migrations.migrate(again.dataSource())).as("schema kept too").isZero();

            // a second server on a directory in use is refused
            assertThatThrownBy(() -> EmbeddedPostgresServer.start(config)).isInstanceOf(IllegalStateException.class);
        }
    }

    @Test
    void aFixedPortIsUsedAndZonkysScratchDirectoryIsRefused() throws Exception {
        int port;
        try (ServerSocket probe = new ServerSocket(0)) {
            port = probe.getLocalPort();
        }
        EmbeddedPostgresServer.Config config = EmbeddedPostgresServer.Config.defaults()
                .withDataDirectory(tmp.resolve("fixed")).withPort(port);
        try (EmbeddedPostgresServer server = EmbeddedPostgresServer.start(config)) {
            assertThat(server.port()).isEqualTo(port);
        }
        Path scratch = Path.of(System.getProperty("java.io.tmpdir"), "embedded-pg", "mine");
        assertThatThrownBy(() -> EmbeddedPostgresServer.start(config.withDataDirectory(scratch)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("cleans up");
        assertThat(EmbeddedPostgresServer.defaultDataDirectory())
                .isEqualTo(Path.of(System.getProperty("user.home"), ".pagewarden", "pg"));
    }
}
