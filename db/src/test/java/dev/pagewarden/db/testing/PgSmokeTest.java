package dev.pagewarden.db.testing;

import dev.pagewarden.db.schema.Migrations;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.ResultSet;

import static org.assertj.core.api.Assertions.assertThat;

class PgSmokeTest {
    @Test
    void startsMigratesRestartsAndStops() throws Exception {
        try (TestPostgres pg = TestPostgres.start("smoke")) {
            assertThat(Migrations.migrate(pg.dataSource())).isPositive();
            pg.restart();
            try (Connection c = pg.dataSource().getConnection(); ResultSet rs = c.createStatement().executeQuery("SELECT version()")) {
                rs.next();
                System.out.println(rs.getString(1));
                assertThat(rs.getString(1)).startsWith("PostgreSQL 17");
            }
            assertThat(Migrations.migrate(pg.dataSource())).isZero();
        }
    }

    @Test
    void theChoiceIsQuickAndEmbeddedWithoutDocker() throws Exception {
        long t0 = System.nanoTime();
        boolean docker = TestPostgres.dockerAvailable();
        long ms = (System.nanoTime() - t0) / 1_000_000;
        System.out.println("Docker engine for tests: " + docker + " (decided in " + ms + " ms)");
        if (!docker) {
            assertThat(ms).isLessThan(2_000);
            try (TestPostgres pg = TestPostgres.start("choice")) {
                assertThat(pg).isInstanceOf(EmbeddedPg.class);
                assertThat(pg.jdbcUrl()).startsWith("jdbc:postgresql://localhost:");
            }
        }
    }
}
