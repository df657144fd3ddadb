package dev.pagewarden.db.testing;

import dev.pagewarden.db.schema.Migrations;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.ResultSet;

import static org.assertj.core.api.Assertions.assertThat;

class PgSmokeTest {
    @Test
    void startsMigratesRestartsAndStops() throws Exception {
        try (EmbeddedPg pg = EmbeddedPg.start("smoke")) {
            assertThat(Migrations.migrate(pg.dataSource())).isEqualTo(1);
            pg.restart();
            try (Connection c = pg.dataSource().getConnection(); ResultSet rs = c.createStatement().executeQuery("SELECT version()")) {
                rs.next();
                System.out.println(rs.getString(1));
                assertThat(rs.getString(1)).startsWith("PostgreSQL 17");
            }
            assertThat(Migrations.migrate(pg.dataSource())).isZero();
        }
    }
}
