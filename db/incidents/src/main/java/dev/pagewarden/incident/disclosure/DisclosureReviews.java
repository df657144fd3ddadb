package dev.pagewarden.incident.disclosure;

import dev.pagewarden.db.evidence.Canonical;
import dev.pagewarden.incident.audit.AdminAuditLog;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Service;
import org.springframework.transaction.support.TransactionTemplate;

import java.sql.Timestamp;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Supplier;

/**
 * Four eyes on disclosures ({@code pagewarden.disclosure.four-eyes}, on by default): a version is
 * published only after a review by someone who neither created nor edited it; the publisher may be
 * either. A review names the reviewer, the time, the version and the SHA-256 of the title and body it
 * approved, and counts only while that text is unchanged: an edit or a new version needs a new review.
 * People are the names the platform authenticates: admin users, and the admin token as one more
 * ({@code admin-token}), so the token alone can never be two people. Refusals are audited.
 *
 * <p>Two names are not always two people: whoever creates an account knows its password, and so does whoever
 * resets it or enables it again after creating it. So a reviewer whose account an author of the version ever
 * created, enabled or reset is refused, and so is a reviewer whose account anyone created, enabled or reset
 * less than {@code pagewarden.disclosure.reviewer-min-age} (7 days by default) before the review: an author
 * with the admin token, or with a second account made for the purpose, cannot make a fresh reviewer and use
 * it at once. The same rule decides which reviews count at publish time, and {@link #flagged} lists the
 * reviews it faults for the audit page.
 */
@Service
public class DisclosureReviews {
    /** Why four eyes refused: the reviewer wrote the text (403), or no one else has reviewed it (409). */
    public static final class Refusal extends RuntimeException {
        public enum Kind { REVIEWER_IS_AUTHOR, REVIEWER_VOUCHED_BY_AUTHOR, REVIEWER_TOO_NEW, REVIEW_REQUIRED }

        private final Kind kind;

        Refusal(Kind kind, String message) {
            super(message);
            this.kind = kind;
        }

        public Kind kind() {
            return kind;
        }

        /** The error code the admin API answers with. */
        public String code() {
            return switch (kind) {
                case REVIEWER_IS_AUTHOR -> "four_eyes_reviewer_is_author";
                case REVIEWER_VOUCHED_BY_AUTHOR -> "four_eyes_reviewer_vouched_by_author";
                case REVIEWER_TOO_NEW -> "four_eyes_reviewer_too_new";
                case REVIEW_REQUIRED -> "four_eyes_review_required";
            };
        }

        /** True when this reviewer may not review it (403); false when it only lacks a review (409). */
        public boolean forbidden() {
            return kind != Kind.REVIEW_REQUIRED;
        }
    }

    /** Why a reviewer's account does not make a second person, and what it is refused as. */
    public record Fault(Refusal.Kind kind, String reason) {
    }

    /** A recorded review the account rule faults: listed on the audit page. */
    public record FlaggedReview(long disclosureId, long incidentId, int version, String reviewer, Instant at, String reason) {
    }

    /** One review: {@code current} while the version's text is still the one approved. */
    public record Review(long id, long disclosureId, int version, String reviewer, Instant at, boolean current) {
    }

    private final JdbcClient jdbc;
    private final AdminAuditLog audit;
    private final TransactionTemplate tx;
    private final Clock clock;
    private final boolean fourEyes;
    private final Duration reviewerMinAge;

    DisclosureReviews(JdbcClient jdbc, AdminAuditLog audit, TransactionTemplate tx, Clock clock,
                      @Value("${pagewarden.disclosure.four-eyes:true}") boolean fourEyes,
                      @Value("${pagewarden.disclosure.reviewer-min-age:7d}") Duration reviewerMinAge) {
        if (reviewerMinAge.isNegative()) {
            throw new IllegalArgumentException("pagewarden.disclosure.reviewer-min-age must not be negative: " + reviewerMinAge);
        }
        this.jdbc = jdbc;
        this.audit = audit;
        this.tx = tx;
        this.clock = clock;
        this.fourEyes = fourEyes;
        this.reviewerMinAge = reviewerMinAge;
    }

    public boolean fourEyes() {
        return fourEyes;
    }

    /** Who wrote the version: its creator and everyone who edited it. */
    public Set<String> authors(Disclosure d) {
        return authorsOf(d.id());
    }

    private Set<String> authorsOf(long disclosureId) {
        return new TreeSet<>(jdbc.sql("""
                SELECT author FROM disclosure_authors WHERE disclosure_id = :d
                UNION SELECT created_by FROM disclosures WHERE id = :d""")
                .param("d", disclosureId).query(String.class).list());
    }

    public List<Review> reviews(Disclosure d) {
        byte[] now = contentHash(d);
        return jdbc.sql("""
                SELECT id, disclosure_id, version, reviewer, reviewed_at, content_sha256 FROM disclosure_reviews
                WHERE disclosure_id = :d ORDER BY id""").param("d", d.id())
                .query((rs, i) -> new Review(rs.getLong(1), rs.getLong(2), rs.getInt(3), rs.getString(4),
                        rs.getTimestamp(5).toInstant(), Arrays.equals(now, rs.getBytes(6))))
                .list();
    }

    /** An edit: the editor becomes one of the version's authors (joins the caller's transaction). */
    void recordAuthor(long disclosureId, String actor) {
        jdbc.sql("""
                INSERT INTO disclosure_authors (disclosure_id, author, first_at) VALUES (:d, :a, :now)
                ON CONFLICT DO NOTHING""").param("d", disclosureId).param("a", actor)
                .param("now", Timestamp.from(clock.instant())).update();
    }

    /**
     * Approves the version's current text: recorded, and the version is then in review (ready to publish).
     * Under four eyes, an author of the version is refused.
     */
    public Disclosure approve(long id, String actor, DisclosureService disclosures) {
        return audited(actor, id, () -> tx.execute(s -> {
            Disclosure d = locked(id, disclosures);
            if (!d.editable()) {
                throw new IllegalArgumentException("disclosure " + id + " is published; a correction is a new version");
            }
            if (fourEyes && authors(d).contains(actor)) {
                throw new Refusal(Refusal.Kind.REVIEWER_IS_AUTHOR, "four eyes: " + actor + " wrote disclosure " + id
                        + " (v" + d.version() + ") and cannot also review it; another user must review it");
            }
            Instant now = clock.instant();
            if (fourEyes) {
                Optional<Fault> fault = fault(actor, authors(d), now);
                if (fault.isPresent()) {
                    throw new Refusal(fault.get().kind(), "four eyes: " + fault.get().reason() + "; " + actor
                            + " cannot review disclosure " + id + " (v" + d.version() + "): another user must review it");
                }
            }
            // after the four-eyes checks: who may not review is told that first
            Placeholders.requireNone(d, "approved");
            jdbc.sql("""
                    INSERT INTO disclosure_reviews (disclosure_id, incident_id, version, reviewer, reviewed_at, content_sha256)
                    VALUES (:d, :i, :v, :r, :now, :h)""").param("d", id).param("i", d.incidentId()).param("v", d.version())
                    .param("r", actor).param("now", Timestamp.from(now)).param("h", contentHash(d)).update();
            jdbc.sql("UPDATE disclosures SET status = 'IN_REVIEW', reviewed_by = :r WHERE id = :id")
                    .param("r", actor).param("id", id).update();
            audit.link("disclosures", id);
            audit.record(actor, "disclosure.approve", "disclosure " + id, "incident " + d.incidentId() + " v" + d.version());
            return disclosures.get(id);
        }));
    }

    /**
     * Under four eyes, refuses to publish a version without a current review by a non-author. Locks the
     * version's row, so an edit cannot slip in between this check and the publish (caller's transaction).
     */
    void requirePublishable(long id, DisclosureService disclosures) {
        Disclosure d = locked(id, disclosures);
        if (!fourEyes || !d.editable()) {
            return;
        }
        Set<String> authors = authors(d);
        boolean reviewed = reviews(d).stream().anyMatch(r -> r.current() && !authors.contains(r.reviewer())
                && fault(r.reviewer(), authors, r.at()).isEmpty());
        if (!reviewed) {
            throw new Refusal(Refusal.Kind.REVIEW_REQUIRED, "four eyes: disclosure " + id + " (v" + d.version()
                    + ") needs a review of its current text by someone other than " + String.join(", ", authors)
                    + ", from an account none of them created, enabled or reset and that is at least "
                    + human(reviewerMinAge) + " old, before it is published");
        }
    }

    /**
     * Editable versions submitted for review and not yet approved, oldest first, that {@code reviewer} did not
     * write: the review queue. Whether the reviewer's account counts as a second person is decided on approval.
     */
    public List<Disclosure> waitingFor(String reviewer, DisclosureService disclosures) {
        return jdbc.sql("""
                SELECT d.id FROM disclosures d WHERE d.status = 'IN_REVIEW' AND d.reviewed_by IS NULL AND d.created_by <> :u
                AND NOT EXISTS (SELECT 1 FROM disclosure_authors a WHERE a.disclosure_id = d.id AND a.author = :u)
                ORDER BY d.id""").param("u", reviewer).query(Long.class).list().stream().map(disclosures::get).toList();
    }

    /**
     * Whether {@code reviewer}'s account counts as a second person for a version written by {@code authors},
     * for a review at {@code at}: not if an author ever created, enabled or reset it, nor if anyone did less
     * than the minimum age before the review (or since: a reviewer's account reset or enabled again after the
     * review voids it). Read from the admin audit (every such change is recorded there, in the change's
     * transaction) and the account's own row. No upper time bound on purpose: the audit's times are the
     * database's clock, the review's this replica's, and a skew between them must not hide a fresh account.
     */
    public Optional<Fault> fault(String reviewer, Set<String> authors, Instant at) {
        record Vouch(String actor, String action, Instant at) {
        }
        List<Vouch> vouches = jdbc.sql("""
                SELECT actor, action, at FROM admin_audit
                WHERE target = :r AND action IN ('admin_user.create', 'admin_user.enable', 'admin_user.password_reset')
                UNION ALL
                SELECT created_by, 'admin_user.create', created_at FROM admin_users WHERE username = :r
                ORDER BY 3 DESC""")
                .param("r", reviewer)
                .query((rs, i) -> new Vouch(rs.getString(1), rs.getString(2), rs.getTimestamp(3).toInstant())).list();
        for (Vouch v : vouches) {
            if (authors.contains(v.actor())) {
                return Optional.of(new Fault(Refusal.Kind.REVIEWER_VOUCHED_BY_AUTHOR, v.actor() + ", an author of the text, "
                        + done(v.action()) + " " + reviewer + "'s account (" + v.at() + ")"));
            }
        }
        Instant since = at.minus(reviewerMinAge);
        return vouches.stream().filter(v -> v.at().isAfter(since)).findFirst()
                .map(v -> new Fault(Refusal.Kind.REVIEWER_TOO_NEW, v.actor() + " " + done(v.action()) + " " + reviewer
                        + "'s account at " + v.at() + ", less than " + human(reviewerMinAge) + " before the review"));
    }

    private static String human(Duration d) {
        return d.toSeconds() % 86_400 == 0 ? d.toDays() + " days" : d.toString().substring(2).toLowerCase(java.util.Locale.ROOT);
    }

    private static String done(String action) {
        return switch (action) {
            case "admin_user.create" -> "created";
            case "admin_user.enable" -> "enabled";
            default -> "reset the password of";
        };
    }

    /**
     * The latest {@code limit} reviews, those the account rule faults, with why (whether or not four eyes is on,
     * and whether or not they were accepted: reviews from before the rule, or from a laxer setting, show here).
     */
    public List<FlaggedReview> flagged(int limit) {
        record Row(long disclosureId, long incidentId, int version, String reviewer, Instant at) {
        }
        List<Row> rows = jdbc.sql("""
                SELECT disclosure_id, incident_id, version, reviewer, reviewed_at FROM disclosure_reviews
                ORDER BY id DESC LIMIT :n""").param("n", limit)
                .query((rs, i) -> new Row(rs.getLong(1), rs.getLong(2), rs.getInt(3), rs.getString(4),
                        rs.getTimestamp(5).toInstant())).list();
        List<FlaggedReview> out = new ArrayList<>();
        for (Row r : rows) {
            Set<String> authors = authorsOf(r.disclosureId());
            fault(r.reviewer(), authors, r.at()).ifPresent(f -> out.add(new FlaggedReview(r.disclosureId(), r.incidentId(),
                    r.version(), r.reviewer(), r.at(), f.reason())));
        }
        return out;
    }

    /** Runs a four-eyes step; a refusal is written to the admin audit (outside the refused transaction) and rethrown. */
    <T> T audited(String actor, long id, Supplier<T> step) {
        try {
            return step.get();
        } catch (Refusal r) {
            audit.record(actor, "disclosure.four_eyes_refused", "disclosure " + id, r.getMessage());
            throw r;
        }
    }

    private Disclosure locked(long id, DisclosureService disclosures) {
        jdbc.sql("SELECT id FROM disclosures WHERE id = :id FOR UPDATE").param("id", id).query(Long.class).optional();
        return disclosures.get(id);
    }

    /** SHA-256 of the title and body (NUL between them: stored text never contains one). */
    static byte[] contentHash(Disclosure d) {
        return Canonical.sha256(d.title() + '\u0000' + d.body());
    }
}
