package dev.pagewarden.incident.report;

import dev.pagewarden.db.evidence.Canonical;
import dev.pagewarden.incident.audit.AdminAuditLog;
import dev.pagewarden.incident.incident.Incident;
import dev.pagewarden.incident.incident.IncidentService;
import dev.pagewarden.incident.input.InvalidTextException;
import dev.pagewarden.incident.input.StoredText;
import org.springframework.dao.DuplicateKeyException;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Service;
import org.springframework.transaction.support.TransactionTemplate;

import java.security.SecureRandom;
import java.sql.Timestamp;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Reports from outside through the public form: each one, once its proof of work checks, opens an
 * incident in the {@code REPORTED} state (the admin UI shows the reporter's contact and text with it)
 * and answers an acknowledgement token. The token is 256 random bits; only its SHA-256 is stored, and
 * with it the reporter reads the status (received, under investigation, closed) and nothing else.
 * Blocking (JDBC): callers run off the event loop.
 */
@Service
public class OutsideReports {
    /** The reporter's actor name in the incident timeline and the admin audit. */
    public static final String ACTOR = "outside-report";
    /** Who closes a report nobody triaged in time. */
    static final String EXPIRY_ACTOR = "report-expiry";
    private static final Pattern TOKEN = Pattern.compile("pwr_[A-Za-z0-9_-]{43}");
    private static final Pattern REQUEST_ID = Pattern.compile("[A-Za-z0-9._:-]{1,128}");
    static final int MAX_CONTACT = 320;
    static final int MAX_REQUEST_IDS = 50;
    /** The longest window a reporter may name: it becomes the incident's blast-radius window. */
    static final Duration MAX_WINDOW = Duration.ofDays(31);
    /**
     * How far back a reported window may start. A triaged report's incident holds the lineage of its window (with
     * the incident lookback on both sides), an untriaged one holds none.
     */
    static final Duration MAX_AGE = Duration.ofDays(365);

    private final JdbcClient jdbc;
    private final IncidentService incidents;
    private final AdminAuditLog audit;
    private final ReportProperties properties;
    private final TransactionTemplate tx;
    private final Clock clock;
    private final SecureRandom random = new SecureRandom();
    private volatile ProofOfWork work;

    OutsideReports(JdbcClient jdbc, IncidentService incidents, AdminAuditLog audit, ReportProperties properties,
                   TransactionTemplate tx, Clock clock) {
        this.jdbc = jdbc;
        this.incidents = incidents;
        this.audit = audit;
        this.properties = properties;
        this.tx = tx;
        this.clock = clock;
    }

    /** What a reporter sends, and from where ({@code client}: its address); {@code requestIds} and the window are optional. */
    public record Submission(String contact, String description, String requestIds, Instant windowFrom, Instant windowTo,
                             String challenge, String nonce, String client) {
    }

    /** What the reporter is told: the token (once) and the status page's path. */
    public record Acknowledgement(String token, String status, Instant receivedAt) {
    }

    /** The reporter's view of a report: its status in three words, and when it was received. */
    public record ReporterView(String status, Instant receivedAt) {
    }

    /** The admin's view: everything the reporter sent. */
    public record Report(long id, long incidentId, Instant receivedAt, String contact, String description, String requestIds,
                         Instant windowFrom, Instant windowTo) {
    }

    /** A proof-of-work challenge that only the client at {@code client} (its address) can spend. */
    public ProofOfWork.Challenge challenge(String client) {
        return work().issue(client);
    }

    /**
     * Closes the reported incidents no responder triaged within {@code pagewarden.report.untriaged-expiry}; returns
     * their ids. Run with every report and status lookup: an untriaged report holds no lineage meanwhile (see the
     * lineage retention), so nothing waits on the closing but the incident list and the reporter's page.
     */
    public List<Long> expireUntriaged() {
        return incidents.expireReported(clock.instant().minus(properties.untriagedExpiry()), EXPIRY_ACTOR,
                "no responder triaged the report within " + properties.untriagedExpiry().toDays() + " days");
    }

    /** Checks and files a report; refusals are {@link InvalidTextException}s naming the field. */
    public Acknowledgement submit(Submission s) {
        expireUntriaged();
        String contact = StoredText.requireLine("contact", s.contact(), MAX_CONTACT);
        String description = StoredText.requireMultiline("description", s.description(), properties.maxDescription());
        String requestIds = requestIds(s.requestIds());
        Instant now = clock.instant();
        checkWindow(s.windowFrom(), s.windowTo(), now);
        byte[] challenge = work().verify(s.challenge(), s.nonce(), s.client());
        byte[] token = new byte[32];
        random.nextBytes(token);
        String tokenText = "pwr_" + Base64.getUrlEncoder().withoutPadding().encodeToString(token);
        try {
            tx.executeWithoutResult(st -> {
                long incident = incidents.openReported(s.windowFrom(), s.windowTo(), ACTOR,
                        "outside report received through /report; contact and description on this page");
                long id = jdbc.sql("""
                        INSERT INTO outside_reports (token_hash, challenge_hash, incident_id, received_at, contact, description,
                          request_ids, window_from, window_to)
                        VALUES (:token, :challenge, :incident, :now, :contact, :description, :ids, :from, :to) RETURNING id""")
                        .param("token", Canonical.sha256(tokenText)).param("challenge", challenge).param("incident", incident)
                        .param("now", Timestamp.from(now)).param("contact", contact).param("description", description)
                        .param("ids", requestIds).param("from", ts(s.windowFrom())).param("to", ts(s.windowTo()))
                        .query(Long.class).single();
                audit.record(ACTOR, "report.received", "incident " + incident, "outside report " + id);
            });
        } catch (DuplicateKeyException e) {
            throw new InvalidTextException("challenge", "this challenge has already been used for a report: fetch a new one");
        }
        return new Acknowledgement(tokenText, Incident.Status.REPORTED.reporterLabel(), now);
    }

    /** The status behind a token; empty for a token that is malformed or unknown (the same answer for both). */
    public Optional<ReporterView> status(String token) {
        if (token == null || !TOKEN.matcher(token).matches()) {
            return Optional.empty();
        }
        expireUntriaged();
        // a report merged into another incident follows that one: it is being worked there
        return jdbc.sql("""
                SELECT coalesce(m.status, i.status), r.received_at FROM outside_reports r JOIN incidents i ON i.id = r.incident_id
                LEFT JOIN incidents m ON m.id = i.merged_into
                WHERE r.token_hash = :h""").param("h", Canonical.sha256(token))
                .query((rs, i) -> new ReporterView(Incident.Status.valueOf(rs.getString(1)).reporterLabel(),
                        rs.getTimestamp(2).toInstant()))
                .optional();
    }

    /** The reports that opened an incident (one, unless reports were merged into it later). */
    public List<Report> forIncident(long incidentId) {
        return jdbc.sql("""
                SELECT id, incident_id, received_at, contact, description, request_ids, window_from, window_to
                FROM outside_reports WHERE incident_id = :i ORDER BY id""").param("i", incidentId)
                .query((rs, i) -> new Report(rs.getLong(1), rs.getLong(2), rs.getTimestamp(3).toInstant(), rs.getString(4),
                        rs.getString(5), rs.getString(6), instant(rs.getTimestamp(7)), instant(rs.getTimestamp(8))))
                .list();
    }

    /** Request ids as the reporter saw them (public ids, {@code X-Request-Id} values), separated by commas or spaces. */
    static String requestIds(String text) {
        if (text == null || text.isBlank()) {
            return null;
        }
        List<String> ids = new ArrayList<>();
        for (String id : text.strip().split("[\\s,]+")) {
            if (!REQUEST_ID.matcher(id).matches()) {
                throw new InvalidTextException("request_ids", "request ids are 1-128 letters, digits, '.', '_', ':' or '-', "
                        + "separated by commas or spaces");
            }
            ids.add(id);
        }
        if (ids.size() > MAX_REQUEST_IDS) {
            throw new InvalidTextException("request_ids", "at most " + MAX_REQUEST_IDS + " request ids, got " + ids.size());
        }
        return String.join(", ", ids);
    }

    private static void checkWindow(Instant from, Instant to, Instant now) {
        if ((from == null) != (to == null)) {
            throw new InvalidTextException(from == null ? "window_from" : "window_to",
                    "give both ends of the time window (window_from and window_to), or neither");
        }
        if (from == null) {
            return;
        }
        if (!from.isBefore(to)) {
            throw new InvalidTextException("window_from", "window_from must be before window_to");
        }
        if (to.isAfter(now.plus(Duration.ofHours(1)))) {
            throw new InvalidTextException("window_to", "window_to lies in the future");
        }
        if (from.isBefore(now.minus(MAX_AGE))) {
            throw new InvalidTextException("window_from", "window_from lies more than " + MAX_AGE.toDays()
                    + " days back; describe an older event in the description");
        }
        if (Duration.between(from, to).compareTo(MAX_WINDOW) > 0) {
            throw new InvalidTextException("window_from", "the time window may span at most " + MAX_WINDOW.toDays()
                    + " days; describe a longer one in the description");
        }
    }

    /** The challenge signer, its key shared by every replica through PostgreSQL (made by whichever replica asks first). */
    private ProofOfWork work() {
        ProofOfWork w = work;
        if (w == null) {
            byte[] fresh = new byte[32];
            random.nextBytes(fresh);
            jdbc.sql("INSERT INTO outside_report_key (id, key, created_at) VALUES (true, :k, :now) ON CONFLICT DO NOTHING")
                    .param("k", fresh).param("now", Timestamp.from(clock.instant())).update();
            byte[] key = jdbc.sql("SELECT key FROM outside_report_key").query(byte[].class).single();
            w = new ProofOfWork(key, properties.difficulty(), properties.challengeTtl(), clock);
            work = w;
        }
        return w;
    }

    private static Timestamp ts(Instant t) {
        return t == null ? null : Timestamp.from(t);
    }

    private static Instant instant(Timestamp t) {
        return t == null ? null : t.toInstant();
    }
}
