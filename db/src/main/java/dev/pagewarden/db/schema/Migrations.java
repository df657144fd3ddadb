package dev.pagewarden.db.schema;

import org.flywaydb.core.Flyway;

import javax.sql.DataSource;

/** Applies the versioned SQL in {@code db/migration} (Flyway): the only way the schema changes. */
public final class Migrations {
    private Migrations() {
    }

    /** Migrates to the latest version; returns how many migrations ran now. */
    public static int migrate(DataSource dataSource) {
        return Flyway.configure()
                .dataSource(dataSource)
                .locations("classpath:db/migration")
                .load()
                .migrate()
                .migrationsExecuted;
    }
}
