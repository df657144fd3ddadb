package dev.pagewarden.incident.disclosure;

import dev.pagewarden.core.receipt.ReceiptKeys;
import dev.pagewarden.core.testing.ManualClock;
import dev.pagewarden.db.audit.LineageQueries;
import dev.pagewarden.db.schema.Migrations;
import dev.pagewarden.db.testing.TestPostgres;
import dev.pagewarden.incident.audit.AdminAuditLog;
import dev.pagewarden.incident.audit.TestAuditLogs;
import dev.pagewarden.incident.incident.FrozenBlastRadiusService;
import dev.pagewarden.incident.incident.IncidentService;
import dev.pagewarden.incident.incident.TestFrozenBlastRadii;
import dev.pagewarden.incident.incident.TestIncidents;
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

import static dev.pagewarden.incident.disclosure.EvidenceRetentionTest.platform;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The pre-filled draft's fill-in markers block approving and publishing, naming each one left; once filled the
 * version is approved and published. The publish plan checks the same without publishing. The review queue lists
 * versions waiting for a review, never to their own authors.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DisclosurePlaceholdersTest {
    private TestPostgres pg;
    private DataSource ds;
    private JdbcClient jdbc;
    private AdminAuditLog audit;
    private TransactionTemplate tx;
    private final ManualClock clock = new ManualClock(Instant.now());

    @BeforeAll
    void startDatabase() throws Exception {
        pg = TestPostgres.start("disclosure-placeholders");
        ds = pg.dataSource();
        Migrations.migrate(ds);
        jdbc = JdbcClient.create(ds);
        audit = TestAuditLogs.over(jdbc);
        tx = new TransactionTemplate(new DataSourceTransactionManager(ds));
    }

    @AfterAll
    void stopDatabase() throws Exception {
        pg.close();
    }

    private IncidentService incidents() {
        return TestIncidents.over(jdbc, platform(), audit, TestIncidents.PROPERTIES, new LineageQueries(ds), tx, clock);
    }

    private DisclosureService disclosures(DisclosureReviews reviews) {
        IncidentService incidents = incidents();
        FrozenBlastRadiusService frozen = TestFrozenBlastRadii.over(ds, incidents, platform(), clock, ReceiptKeys.generate("pw"));
        return new DisclosureService(jdbc, incidents, platform(), audit,
                new WebhookService(jdbc, TestIncidents.PROPERTIES, null, null, null, clock), reviews, tx, clock, frozen);
    }

    @Test
    void placeholdersLeftBlockApprovingAndPublishingUntilFilled() {
        DisclosureReviews reviews = new DisclosureReviews(jdbc, audit, tx, clock, false, Duration.ZERO);
        DisclosureService disclosures = disclosures(reviews);
        long incident = incidents().openReported(null, null, "reporter", "a report");
        Disclosure draft = disclosures.draft(incident, "ann");
        assertThat(Placeholders.in(draft.body())).as("the template's markers")
                .containsExactly("_Describe the root cause._", "_Describe the fix and how it was verified._");
        disclosures.submitForReview(draft.id(), "ann");

        assertThatThrownBy(() -> disclosures.approve(draft.id(), "bob")).isInstanceOf(Placeholders.Unfilled.class)
                .hasMessageContaining("cannot be approved").hasMessageContaining("\"_Describe the root cause._\"")
                .hasMessageContaining("\"_Describe the fix and how it was verified._\"");
        assertThatThrownBy(() -> disclosures.publish(draft.id(), "bob")).isInstanceOf(Placeholders.Unfilled.class)
                .hasMessageContaining("cannot be published");
        assertThatThrownBy(() -> disclosures.planPublish(draft.id())).isInstanceOf(Placeholders.Unfilled.class);
        assertThat(disclosures.get(draft.id()).status()).isEqualTo(Disclosure.Status.IN_REVIEW);
        assertThat(disclosures.get(draft.id()).publishedAt()).isNull();

        // one filled, one left: the refusal names only the one left
        disclosures.edit(draft.id(), draft.title(), draft.body().replace("_Describe the root cause._", "A skipped check."), "ann");
        disclosures.submitForReview(draft.id(), "ann");
        assertThatThrownBy(() -> disclosures.publish(draft.id(), "bob")).isInstanceOfSatisfying(Placeholders.Unfilled.class,
                u -> assertThat(u.placeholders()).containsExactly("_Describe the fix and how it was verified._"));

        String filled = disclosures.get(draft.id()).body().replace("_Describe the fix and how it was verified._", "Fixed.");
        disclosures.edit(draft.id(), draft.title(), filled, "ann");
        disclosures.submitForReview(draft.id(), "ann");
        disclosures.approve(draft.id(), "bob");
        DisclosureService.PublishPlan plan = disclosures.planPublish(draft.id());
        assertThat(plan.disclosure().status()).as("planning publishes nothing").isEqualTo(Disclosure.Status.IN_REVIEW);
        assertThat(disclosures.publish(draft.id(), "bob").status()).isEqualTo(Disclosure.Status.PUBLISHED);
    }

    @Test
    void theReviewQueueListsSubmittedVersionsToEveryoneButTheirAuthors() {
        DisclosureReviews reviews = new DisclosureReviews(jdbc, audit, tx, clock, true, Duration.ZERO);
        DisclosureService disclosures = disclosures(reviews);
        long incident = incidents().openReported(null, null, "reporter", "another report");
        long id = disclosures.draft(incident, "cat").id();
        disclosures.edit(id, "Cross-tenant read", "What happened.", "dora");
        assertThat(reviews.waitingFor("eve", disclosures)).extracting(Disclosure::id).as("a draft is not yet asked for").doesNotContain(id);
        disclosures.submitForReview(id, "cat");

        assertThat(reviews.waitingFor("eve", disclosures)).extracting(Disclosure::id).contains(id);
        assertThat(reviews.waitingFor("cat", disclosures)).extracting(Disclosure::id).as("creator").doesNotContain(id);
        assertThat(reviews.waitingFor("dora", disclosures)).extracting(Disclosure::id).as("editor").doesNotContain(id);
        disclosures.approve(id, "eve");
        assertThat(reviews.waitingFor("fay", disclosures)).extracting(Disclosure::id).as("reviewed").doesNotContain(id);
    }
}
