package dev.pagewarden.incident.status;

import dev.pagewarden.core.testing.ManualClock;
import dev.pagewarden.db.schema.Migrations;
import dev.pagewarden.db.testing.TestPostgres;
import dev.pagewarden.incident.audit.TestAuditLogs;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import javax.sql.DataSource;
import java.time.Duration;
import java.time.Instant;
import java.util.NoSuchElementException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Public status updates on real PostgreSQL: the lifecycle order, newest first, refusals, append-only rows. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class StatusUpdateServiceTest {
    private TestPostgres pg;
    private JdbcClient jdbc;
    private StatusUpdateService updates;
    private final ManualClock clock = new ManualClock(Instant.parse("2026-12-01T10:00:00Z"));

    @BeforeAll
    void startDatabase() throws Exception {
        pg = TestPostgres.start("status-updates");
        DataSource ds = pg.dataSource();
        Migrations.migrate(ds);
        jdbc = JdbcClient.create(ds);
        updates = new StatusUpdateService(jdbc, TestAuditLogs.over(jdbc),
                new TransactionTemplate(new DataSourceTransactionManager(ds)), clock);
    }

    @AfterAll
    void stopDatabase() throws Exception {
        pg.close();
    }

    private long incident() {
        return jdbc.sql("""
                INSERT INTO incidents (title, node, worker, status, severity, opened_at, first_event, last_event)
                VALUES ('checksum mismatch', 'engine-0', 'decode-0', 'INVESTIGATING', 'CRITICAL', now(), now(), now()) RETURNING id""")
                .query(Long.class).single();
    }

    @Test
    void theLifecycleMovesForwardAndTheUpdatesListNewestFirst() {
        long id = incident();
        updates.post(id, PublicState.INVESTIGATING, "Errors on one model", "We are looking into it.", "alice");
        clock.advance(Duration.ofMinutes(20));
        updates.post(id, PublicState.INVESTIGATING, "Errors on one model", "Still looking.", "alice");
        clock.advance(Duration.ofMinutes(20));
        updates.post(id, PublicState.MONITORING, "KV-cache isolation fault", "Fixed; watching.", "bob");

        assertThat(updates.updates(id)).extracting(StatusUpdate::state)
                .containsExactly(PublicState.MONITORING, PublicState.INVESTIGATING, PublicState.INVESTIGATING);
        assertThat(updates.updates(id).getFirst().postedAt()).isEqualTo(Instant.parse("2026-12-01T10:40:00Z"));
        assertThat(updates.updates(id).getFirst().postedBy()).isEqualTo("bob");

        assertThatThrownBy(() -> updates.post(id, PublicState.IDENTIFIED, "t", "back", "bob"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("incident " + id + " is monitoring on the status page and cannot go back to identified");
        updates.post(id, PublicState.RESOLVED, "KV-cache isolation fault", "Resolved.", "bob");
        assertThatThrownBy(() -> updates.post(id, PublicState.RESOLVED, "t", "again", "bob"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("incident " + id + " is resolved on the status page and takes no more updates");
        assertThat(updates.updates(id)).hasSize(4);
    }

    @Test
    void theStatusPageListsTheMostRecentlyUpdatedIncidentFirstWithItsLatestHeadline() {
        long older = incident();
        long newer = incident();
        updates.post(older, PublicState.INVESTIGATING, "First", "a", "alice");
        updates.post(newer, PublicState.IDENTIFIED, "Second", "b", "alice");
        updates.post(older, PublicState.IDENTIFIED, "First, renamed", "c", "alice");

        var listed = updates.incidents().stream().filter(p -> p.incidentId() == older || p.incidentId() == newer).toList();
        assertThat(listed).extracting(PublicIncident::incidentId).containsExactly(older, newer);
        assertThat(listed.getFirst().title()).isEqualTo("First, renamed");
        assertThat(listed.getFirst().state()).isEqualTo(PublicState.IDENTIFIED);
        assertThat(listed.getFirst().updates()).extracting(StatusUpdate::body).containsExactly("c", "a");
    }

    @Test
    void refusesUnknownIncidentsBlankTextAndChangesToPostedRows() {
        assertThatThrownBy(() -> updates.post(Long.MAX_VALUE, PublicState.INVESTIGATING, "t", "b", "alice"))
                .isInstanceOf(NoSuchElementException.class);
        long id = incident();
        assertThatThrownBy(() -> updates.post(id, PublicState.INVESTIGATING, " ", "b", "alice"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("title is required");
        assertThatThrownBy(() -> updates.post(id, PublicState.INVESTIGATING, "t", "", "alice"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("text is required");
        assertThat(updates.updates(id)).isEmpty();

        updates.post(id, PublicState.INVESTIGATING, "t", "posted", "alice");
        assertThatThrownBy(() -> jdbc.sql("UPDATE status_updates SET body = 'rewritten' WHERE incident_id = :i")
                .param("i", id).update()).hasMessageContaining("is public and immutable");
        assertThat(updates.updates(id).getFirst().body()).isEqualTo("posted");
    }

    @Test
    void statesParseFromFormsAndOrderTheLifecycle() {
        assertThat(PublicState.parse(" Monitoring ")).isEqualTo(PublicState.MONITORING);
        assertThatThrownBy(() -> PublicState.parse("mitigated")).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("state must be one of investigating, identified, monitoring, resolved");
        assertThat(PublicState.RESOLVED.mayFollow(null)).isTrue();
        assertThat(PublicState.IDENTIFIED.mayFollow(PublicState.INVESTIGATING)).isTrue();
        assertThat(PublicState.IDENTIFIED.mayFollow(PublicState.IDENTIFIED)).isTrue();
        assertThat(PublicState.INVESTIGATING.mayFollow(PublicState.IDENTIFIED)).isFalse();
        assertThat(PublicState.RESOLVED.mayFollow(PublicState.RESOLVED)).isFalse();
    }
}
