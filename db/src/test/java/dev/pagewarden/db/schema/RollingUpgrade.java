package dev.pagewarden.db.schema;

import dev.pagewarden.db.testing.TestPostgres;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.MigrationInfo;
import org.flywaydb.core.api.MigrationVersion;
import org.postgresql.ds.PGSimpleDataSource;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * The rolling-upgrade rule: during an upgrade the first new replica migrates the schema while replicas of the
 * previous release keep running against it, so every migration after the previous release's last one may only
 * expand what that release uses (see docs/platform.md, "Upgrading").
 */
public final class RollingUpgrade {
    /**
     * The last migration of the previous release (the schema its replicas run on). At a release, set this to
     * the last migration that release ships; only later migrations may then contract what it still used.
     */
    public static final String PREVIOUS_RELEASE_LAST_MIGRATION = "6.3";
    /** The release commit that schema belongs to (the old writers' statements in test resources come from it). */
    public static final String PREVIOUS_RELEASE_COMMIT = "753c036";
    /**
     * Contractions reviewed as safe: the finding, exactly as reported, to why no replica of the previous release
     * touches the object any more (the release whose code stopped using it), or why what it does touch still works.
     */
    static final Map<String, String> REVIEWED_CONTRACTIONS = Map.of(
            "V7_3 (outside reports and reviews): constraint incidents.incidents_status_check changed from "
                    + "CHECK ((status = ANY (ARRAY['INVESTIGATING'::text, 'IDENTIFIED'::text, 'MITIGATED'::text, "
                    + "'RESOLVED'::text]))) to CHECK ((status = ANY (ARRAY['REPORTED'::text, 'INVESTIGATING'::text, "
                    + "'IDENTIFIED'::text, 'MITIGATED'::text, 'RESOLVED'::text])))",
            "widened by one value: every status the previous release writes still passes; its incident pages cannot "
                    + "show a REPORTED incident until it is upgraded (docs/platform.md, Upgrading)");

    private RollingUpgrade() {
    }

    public static Flyway flyway(DataSource ds, String target, String... locations) {
        return Flyway.configure().dataSource(ds).locations(locations).target(target).load();
    }

    /**
     * Migrates {@code ds} (empty) to the previous release's schema, then one migration at a time to the latest,
     * comparing the catalog around each: every contraction of an object of the previous release, as
     * "V7_2 (description): what". Fails when the boundary is not one of the migrations.
     */
    static List<String> contractionsAfterPreviousRelease(DataSource ds, String... locations) throws SQLException {
        MigrationVersion boundary = MigrationVersion.fromVersion(PREVIOUS_RELEASE_LAST_MIGRATION);
        MigrationInfo[] all = flyway(ds, "latest", locations).info().all();
        if (Arrays.stream(all).noneMatch(m -> boundary.equals(m.getVersion()))) {
            throw new IllegalStateException("no migration V" + PREVIOUS_RELEASE_LAST_MIGRATION.replace('.', '_')
                    + " in " + List.of(locations) + ": PREVIOUS_RELEASE_LAST_MIGRATION must name the previous release's last one");
        }
        flyway(ds, boundary.getVersion(), locations).migrate();
        SchemaCatalog release = read(ds), before = release;
        List<String> found = new ArrayList<>();
        for (MigrationInfo m : all) {
            if (m.getVersion() == null || m.getVersion().compareTo(boundary) <= 0) {
                continue;
            }
            flyway(ds, m.getVersion().getVersion(), locations).migrate();
            SchemaCatalog after = read(ds);
            for (String c : SchemaCatalog.contractions(release, before, after)) {
                String finding = "V" + m.getVersion().getVersion().replace('.', '_') + " (" + m.getDescription() + "): " + c;
                if (!REVIEWED_CONTRACTIONS.containsKey(finding)) {
                    found.add(finding);
                }
            }
            before = after;
        }
        return found;
    }

    static SchemaCatalog read(DataSource ds) throws SQLException {
        try (Connection c = ds.getConnection()) {
            return SchemaCatalog.read(c);
        }
    }

    /** A new, empty database on {@code pg}, for one test's migrations. */
    public static DataSource newDatabase(TestPostgres pg, String name) throws SQLException {
        try (Connection c = pg.dataSource().getConnection(); Statement st = c.createStatement()) {
            st.setQueryTimeout(60);
            st.execute("CREATE DATABASE " + name);
        }
        PGSimpleDataSource ds = new PGSimpleDataSource();
        ds.setUrl(pg.jdbcUrl().substring(0, pg.jdbcUrl().lastIndexOf('/') + 1) + name);
        ds.setUser(pg.user());
        ds.setPassword(pg.password());
        ds.setConnectTimeout(5);
        ds.setSocketTimeout(60);
        return ds;
    }
}
