package dev.pagewarden.adminui.disclosure;

import dev.pagewarden.adminui.audit.AdminAuditLog;
import dev.pagewarden.db.evidence.Canonical;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Service;
import org.springframework.transaction.support.TransactionTemplate;

import java.sql.Timestamp;
import java.time.Clock;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
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
 */
@Service
public class DisclosureReviews {
    /** Why four eyes refused: the reviewer wrote the text (403), or no one else has reviewed it (409). */
    public static final class Refusal extends RuntimeException {
        public enum Kind { REVIEWER_IS_AUTHOR, REVIEW_REQUIRED }

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
            return kind == Kind.REVIEWER_IS_AUTHOR ? "four_eyes_reviewer_is_author" : "four_eyes_review_required";
        }
    }

    /** One review: {@code current} while the version's text is still the one approved. */
    public record Review(long id, long disclosureId, int version, String reviewer, Instant at, boolean current) {
    }

    private final JdbcClient jdbc;
    private final AdminAuditLog audit;
    private final TransactionTemplate tx;
    private final Clock clock;
    private final boolean fourEyes;

    DisclosureReviews(JdbcClient jdbc, AdminAuditLog audit, TransactionTemplate tx, Clock clock,
                      @Value("${pagewarden.disclosure.four-eyes:true}") boolean fourEyes) {
        this.jdbc = jdbc;
        this.audit = audit;
        this.tx = tx;
        this.clock = clock;
        this.fourEyes = fourEyes;
    }

    public boolean fourEyes() {
        return fourEyes;
    }

    /** Who wrote the version: its creator and everyone who edited it. */
    public Set<String> authors(Disclosure d) {
        Set<String> out = new TreeSet<>(jdbc.sql("SELECT author FROM disclosure_authors WHERE disclosure_id = :d")
                .param("d", d.id()).query(String.class).list());
        out.add(d.createdBy());
        return out;
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
            jdbc.sql("""
                    INSERT INTO disclosure_reviews (disclosure_id, incident_id, version, reviewer, reviewed_at, content_sha256)
                    VALUES (:d, :i, :v, :r, :now, :h)""").param("d", id).param("i", d.incidentId()).param("v", d.version())
                    .param("r", actor).param("now", Timestamp.from(clock.instant())).param("h", contentHash(d)).update();
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
        boolean reviewed = reviews(d).stream().anyMatch(r -> r.current() && !authors.contains(r.reviewer()));
        if (!reviewed) {
            throw new Refusal(Refusal.Kind.REVIEW_REQUIRED, "four eyes: disclosure " + id + " (v" + d.version()
                    + ") needs a review of its current text by someone other than " + String.join(", ", authors)
                    + " before it is published");
        }
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
