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
import java.util.Set;

import static dev.pagewarden.incident.disclosure.EvidenceRetentionTest.platform;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Four eyes counts people, not names: a reviewer whose account an author created, enabled or reset is refused
 * however old the account; an account anyone created, enabled or reset less than the minimum age (7 days here)
 * before the review is refused until it is old enough; a review the rule faults (recorded where four eyes was
 * off, or before the rule) does not count at publish time and is listed for the audit page with why.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ReviewerAccountsTest {
    private static final Duration MIN_AGE = Duration.ofDays(7);
    private TestPostgres pg;
    private DataSource ds;
    private JdbcClient jdbc;
    private AdminAuditLog audit;
    private TransactionTemplate tx;
    private final ManualClock clock = new ManualClock(Instant.now());

    @BeforeAll
    void startDatabase() throws Exception {
        pg = TestPostgres.start("reviewer-accounts");
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

    private DisclosureService disclosures(DisclosureReviews reviews) {
        IncidentService incidents = TestIncidents.over(jdbc, platform(), audit, TestIncidents.PROPERTIES, new LineageQueries(ds), tx, clock);
        FrozenBlastRadiusService frozen = TestFrozenBlastRadii.over(ds, incidents, platform(), clock, ReceiptKeys.generate("pw"));
        return new DisclosureService(jdbc, incidents, platform(), audit,
                new WebhookService(jdbc, TestIncidents.PROPERTIES, null, null, null, clock), reviews, tx, clock, frozen);
    }

    private DisclosureReviews reviews(boolean fourEyes) {
        return new DisclosureReviews(jdbc, audit, tx, clock, fourEyes, MIN_AGE);
    }

    /** An account as the users page makes it: the row, and the audit entry naming who made it (now, in database time). */
    private void account(String name, String createdBy) {
        jdbc.sql("INSERT INTO admin_users (username, password_hash, role, created_by) VALUES (:u, '{noop}x', 'RESPONDER', :by)")
                .param("u", name).param("by", createdBy).update();
        audit.record(createdBy, "admin_user.create", name, "role responder");
    }

    /** A version drafted and edited by {@code author}: its only author. */
    private long draftBy(String author, DisclosureService disclosures) {
        long incident = TestIncidents.over(jdbc, platform(), audit, TestIncidents.PROPERTIES, new LineageQueries(ds), tx, clock)
                .openReported(null, null, "reporter", "a report");
        long id = disclosures.draft(incident, author).id();
        disclosures.edit(id, "Cross-tenant read", "What happened.", author);
        return id;
    }

    private static DisclosureReviews.Refusal refusal(Runnable step) {
        try {
            step.run();
        } catch (DisclosureReviews.Refusal r) {
            return r;
        }
        throw new AssertionError("not refused");
    }

    @Test
    void anAccountAnAuthorCreatedCannotReviewTheirTextHoweverOld() {
        DisclosureService disclosures = disclosures(reviews(true));
        account("ann", "test");
        account("ann-sock", "ann");
        clock.set(Instant.now().plus(Duration.ofDays(30))); // both accounts long past the minimum age
        long id = draftBy("ann", disclosures);

        DisclosureReviews.Refusal refused = refusal(() -> disclosures.approve(id, "ann-sock"));
        assertThat(refused.kind()).isEqualTo(DisclosureReviews.Refusal.Kind.REVIEWER_VOUCHED_BY_AUTHOR);
        assertThat(refused.code()).isEqualTo("four_eyes_reviewer_vouched_by_author");
        assertThat(refused.forbidden()).isTrue();
        assertThat(refused.getMessage()).contains("ann, an author of the text, created ann-sock's account");
        assertThat(jdbc.sql("SELECT count(*) FROM disclosure_reviews WHERE disclosure_id = :d").param("d", id)
                .query(Long.class).single()).as("nothing recorded").isZero();
        assertThat(refusal(() -> disclosures.publish(id, "ann")).kind()).isEqualTo(DisclosureReviews.Refusal.Kind.REVIEW_REQUIRED);

        // someone the author did not vouch for reviews, and it publishes
        account("ann-peer", "test");
        clock.set(Instant.now().plus(Duration.ofDays(30)));
        disclosures.approve(id, "ann-peer");
        assertThat(disclosures.publish(id, "ann").publishedBy()).isEqualTo("ann");
    }

    @Test
    void anAccountAnAuthorEnabledOrResetCannotReviewTheirText() {
        DisclosureService disclosures = disclosures(reviews(true));
        account("bea", "test");
        account("bea-enabled", "test");
        account("bea-reset", "test");
        audit.record("bea", "admin_user.enable", "bea-enabled", null);
        audit.record("bea", "admin_user.password_reset", "bea-reset", "one-time password");
        clock.set(Instant.now().plus(Duration.ofDays(30)));
        long id = draftBy("bea", disclosures);

        assertThat(refusal(() -> disclosures.approve(id, "bea-enabled")).getMessage())
                .contains("bea, an author of the text, enabled bea-enabled's account");
        assertThat(refusal(() -> disclosures.approve(id, "bea-reset")).getMessage())
                .contains("bea, an author of the text, reset the password of bea-reset's account");
    }

    @Test
    void aFreshAccountReviewsOnlyOnceItIsOldEnough() {
        DisclosureService disclosures = disclosures(reviews(true));
        clock.set(Instant.now());
        account("cid", "test");
        account("cid-new", "admin-token"); // made with the token, so no author's name on it
        long id = draftBy("cid", disclosures);

        DisclosureReviews.Refusal refused = refusal(() -> disclosures.approve(id, "cid-new"));
        assertThat(refused.kind()).isEqualTo(DisclosureReviews.Refusal.Kind.REVIEWER_TOO_NEW);
        assertThat(refused.code()).isEqualTo("four_eyes_reviewer_too_new");
        assertThat(refused.getMessage()).contains("admin-token created cid-new's account at").contains("less than 7 days");

        clock.advance(MIN_AGE.minusMinutes(1));
        assertThat(refusal(() -> disclosures.approve(id, "cid-new")).kind()).isEqualTo(DisclosureReviews.Refusal.Kind.REVIEWER_TOO_NEW);
        clock.advance(Duration.ofMinutes(2));
        disclosures.approve(id, "cid-new");
        assertThat(disclosures.publish(id, "cid").publishedBy()).isEqualTo("cid");
    }

    @Test
    void aReviewTheRuleFaultsDoesNotCountAtPublishAndIsFlagged() {
        clock.set(Instant.now().plus(Duration.ofDays(30)));
        account("dan", "test");
        account("dan-sock", "dan");
        // recorded where the rule did not apply: four eyes off (or a release before the rule)
        DisclosureService lax = disclosures(reviews(false));
        long id = draftBy("dan", lax);
        lax.approve(id, "dan-sock");

        DisclosureReviews strict = reviews(true);
        assertThat(refusal(() -> disclosures(strict).publish(id, "dan")).kind())
                .isEqualTo(DisclosureReviews.Refusal.Kind.REVIEW_REQUIRED);
        assertThat(strict.flagged(200)).filteredOn(f -> f.disclosureId() == id).singleElement().satisfies(f -> {
            assertThat(f.reviewer()).isEqualTo("dan-sock");
            assertThat(f.reason()).contains("dan, an author of the text, created dan-sock's account");
        });
        assertThat(strict.fault("dan-sock", Set.of("someone-else"), clock.instant())).as("not an author's text: fine").isEmpty();
    }
}
