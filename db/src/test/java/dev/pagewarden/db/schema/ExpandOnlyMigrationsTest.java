package dev.pagewarden.db.schema;

import dev.pagewarden.db.testing.TestPostgres;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import javax.sql.DataSource;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every migration after the previous release's last one ({@link RollingUpgrade#PREVIOUS_RELEASE_LAST_MIGRATION})
 * only expands the schema that release uses, judged on a real PostgreSQL's catalog before and after each one:
 * new migrations are covered without being listed. The rule itself is shown to catch contracting migrations.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ExpandOnlyMigrationsTest {
    private static final String MIGRATIONS = "classpath:db/migration";
    private TestPostgres pg;
    private SchemaCatalog release;
    private DataSource latest;

    @BeforeAll
    void start() throws Exception {
        pg = TestPostgres.start("expand-only");
        DataSource atRelease = RollingUpgrade.newDatabase(pg, "at_release");
        RollingUpgrade.flyway(atRelease, RollingUpgrade.PREVIOUS_RELEASE_LAST_MIGRATION, MIGRATIONS).migrate();
        release = RollingUpgrade.read(atRelease);
        latest = RollingUpgrade.newDatabase(pg, "at_latest");
        Migrations.migrate(latest);
    }

    @AfterAll
    void stop() throws Exception {
        pg.close();
    }

    @Test
    void everyMigrationAfterThePreviousReleaseOnlyExpandsItsSchema() throws Exception {
        List<String> found = RollingUpgrade.contractionsAfterPreviousRelease(RollingUpgrade.newDatabase(pg, "rule"), MIGRATIONS);
        assertThat(found).as("migrations after V%s that a replica of the previous release would trip over "
                        + "(docs/platform.md, Upgrading: expand now, contract in a later release)",
                RollingUpgrade.PREVIOUS_RELEASE_LAST_MIGRATION.replace('.', '_'))
                .isEmpty();
    }

    /**
     * The previous release's migrations as it shipped them: Flyway refuses to start a replica whose migration
     * differs from the one a database applied (checksum), so an edited released migration stops the upgrade.
     */
    @Test
    void thePreviousReleasesMigrationsAreUnchanged() throws Exception {
        List<String> released;
        try (var in = getClass().getResourceAsStream("/upgrade/released-migrations.txt")) {
            released = new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8).lines()
                    .filter(l -> !l.isBlank() && !l.startsWith("#")).toList();
        }
        org.flywaydb.core.api.MigrationVersion boundary =
                org.flywaydb.core.api.MigrationVersion.fromVersion(RollingUpgrade.PREVIOUS_RELEASE_LAST_MIGRATION);
        List<String> now = java.util.Arrays.stream(RollingUpgrade.flyway(RollingUpgrade.newDatabase(pg, "checksums"), "latest",
                        MIGRATIONS).info().all())
                .filter(m -> m.getVersion() != null && m.getVersion().compareTo(boundary) <= 0)
                .map(m -> m.getScript() + " " + m.getChecksum()).toList();
        assertThat(now).as("migrations up to V%s as released (upgrade/released-migrations.txt): a released migration never changes; "
                        + "add a new one instead", RollingUpgrade.PREVIOUS_RELEASE_LAST_MIGRATION.replace('.', '_'))
                .containsExactlyElementsOf(released);
    }

    /**
     * A release whose migrations contract: the rule names the migration and the object. What a later migration
     * does to a table created after the release (no old replica knows it) is not a contraction.
     */
    @Test
    void aContractingMigrationIsNamedWithWhatItContracts(@TempDir Path dir) throws Exception {
        Files.writeString(dir.resolve("V999_1__expand_and_contract.sql"), """
                ALTER TABLE requests ADD COLUMN region text;
                ALTER TABLE requests RENAME COLUMN error_code TO error;
                CREATE TABLE added_later (id bigint PRIMARY KEY, note text);
                """);
        Files.writeString(dir.resolve("V999_2__change_the_new_table.sql"), """
                ALTER TABLE added_later DROP COLUMN note;
                ALTER TABLE added_later ADD COLUMN required text NOT NULL;
                """);
        Files.writeString(dir.resolve("V999_3__node_required.sql"), """
                ALTER TABLE admin_audit ADD COLUMN node text NOT NULL DEFAULT 'unknown';
                ALTER TABLE admin_audit ALTER COLUMN node DROP DEFAULT;
                """);
        List<String> found = RollingUpgrade.contractionsAfterPreviousRelease(RollingUpgrade.newDatabase(pg, "contracting"),
                MIGRATIONS, "filesystem:" + dir);
        assertThat(found).containsExactly(
                "V999_1 (expand and contract): column requests.error_code dropped or renamed",
                "V999_3 (node required): column admin_audit.node added NOT NULL without a default on existing table admin_audit");
    }

    /**
     * Each statement, run in a transaction (rolled back) on the latest schema, against what the rule says of it
     * ("; " between several findings).
     */
    @ParameterizedTest
    @CsvSource(delimiter = '|', textBlock = """
            DROP TABLE tenant_webhooks                                                  | table tenant_webhooks dropped or renamed
            ALTER TABLE admin_audit RENAME TO admin_log                                 | table admin_audit dropped or renamed
            ALTER TABLE requests DROP COLUMN error_code                                 | column requests.error_code dropped or renamed
            ALTER TABLE requests RENAME COLUMN model TO model_id                        | column requests.model dropped or renamed; column requests.model_id added NOT NULL without a default on existing table requests
            ALTER TABLE requests ALTER COLUMN prompt_tokens TYPE bigint                 | column requests.prompt_tokens changed type from integer to bigint
            ALTER TABLE receipt_keys ALTER COLUMN algorithm TYPE varchar(16)            | column receipt_keys.algorithm changed type from text to character varying(16)
            ALTER TABLE requests ALTER COLUMN error_code SET NOT NULL                   | column requests.error_code made NOT NULL
            ALTER TABLE incidents ADD COLUMN owner text NOT NULL                        | column incidents.owner added NOT NULL without a default on existing table incidents
            ALTER TABLE requests ALTER COLUMN stream DROP DEFAULT                       | column requests.stream lost its default false
            ALTER TABLE requests ADD CONSTRAINT short_model CHECK (length(model) < 99)  | constraint requests.short_model (CHECK ((length(model) < 99))) added to existing table requests without NOT VALID
            ALTER TABLE admin_audit ADD CONSTRAINT one_per_at UNIQUE (actor, at)        | constraint admin_audit.one_per_at (UNIQUE (actor, at)) added to existing table admin_audit
            CREATE UNIQUE INDEX one_per_tenant ON requests (tenant_id, received_at)     | unique index requests.one_per_tenant added to existing table requests: CREATE UNIQUE INDEX one_per_tenant ON public.requests USING btree (tenant_id, received_at)
            ALTER TABLE quota_buckets DROP CONSTRAINT quota_buckets_pkey                | constraint quota_buckets.quota_buckets_pkey (PRIMARY KEY (id)) dropped or renamed
            DROP INDEX requests_public_id                                               | unique index requests.requests_public_id dropped or changed (an ON CONFLICT of the previous release may name it)
            DROP SEQUENCE engine_id_blocks                                              | sequence engine_id_blocks dropped or renamed
            DROP FUNCTION disclosures_immutable() CASCADE                               | function disclosures_immutable() dropped or its result changed
            """)
    void aContractingStatementIsCaught(String statement, String expected) throws Exception {
        assertThat(contractionsOf(statement)).containsExactly(expected.split("; "));
    }

    @ParameterizedTest
    @ValueSource(strings = {
            "ALTER TABLE requests ADD COLUMN region text",
            "ALTER TABLE requests ADD COLUMN attempts integer NOT NULL DEFAULT 0",
            "ALTER TABLE requests ADD CONSTRAINT short_model CHECK (length(model) < 99) NOT VALID",
            "ALTER TABLE incident_entries ADD CONSTRAINT entry_incident FOREIGN KEY (incident_id) REFERENCES incidents (id) NOT VALID",
            "ALTER TABLE requests ALTER COLUMN error_code SET DEFAULT 'none'",
            "CREATE INDEX requests_model ON requests (model)",
            "CREATE TABLE brand_new (id bigint PRIMARY KEY, name text NOT NULL UNIQUE CHECK (name <> ''))",
            "COMMENT ON COLUMN requests.model IS 'the model id'",
    })
    void anExpandingStatementPasses(String statement) throws Exception {
        assertThat(contractionsOf(statement)).isEmpty();
    }

    private List<String> contractionsOf(String statement) throws Exception {
        try (Connection c = latest.getConnection()) {
            c.setAutoCommit(false);
            try (Statement st = c.createStatement()) {
                st.setQueryTimeout(30);
                SchemaCatalog before = SchemaCatalog.read(c);
                st.execute(statement);
                return SchemaCatalog.contractions(release, before, SchemaCatalog.read(c));
            } finally {
                c.rollback();
            }
        }
    }
}
