-- Outside reports (the public /report form) and four-eyes disclosure reviews. New tables, and the incident
-- status check widened by one value (REPORTED): every row an earlier release wrote still passes it, and an
-- earlier release keeps writing as before. It cannot read a REPORTED incident, though (its incident pages
-- fail on the unknown status) until it is upgraded too.

ALTER TABLE incidents DROP CONSTRAINT incidents_status_check;
ALTER TABLE incidents ADD CONSTRAINT incidents_status_check
    CHECK (status IN ('REPORTED', 'INVESTIGATING', 'IDENTIFIED', 'MITIGATED', 'RESOLVED'));

CREATE TABLE outside_reports (
    id             bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    token_hash     bytea       NOT NULL UNIQUE,
    challenge_hash bytea       NOT NULL UNIQUE,
    incident_id    bigint      NOT NULL REFERENCES incidents (id),
    received_at    timestamptz NOT NULL,
    contact        text        NOT NULL,
    description    text        NOT NULL,
    request_ids    text,
    window_from    timestamptz,
    window_to      timestamptz
);
COMMENT ON TABLE outside_reports IS 'Reports from outside (security researchers, customers) through /report; each opened a REPORTED incident.';
COMMENT ON COLUMN outside_reports.token_hash IS 'SHA-256 of the acknowledgement token the reporter holds; the token itself is never stored.';
COMMENT ON COLUMN outside_reports.challenge_hash IS 'SHA-256 of the proof-of-work challenge the report solved: one solved challenge opens one report.';
CREATE INDEX outside_reports_incident ON outside_reports (incident_id);

CREATE TABLE outside_report_key (
    id         boolean     PRIMARY KEY DEFAULT true CHECK (id),
    key        bytea       NOT NULL,
    created_at timestamptz NOT NULL
);
COMMENT ON TABLE outside_report_key IS 'One row: the HMAC key that signs /report proof-of-work challenges, shared by every replica '
    '(a challenge fetched from one replica may be answered to another).';

CREATE TABLE disclosure_authors (
    disclosure_id bigint      NOT NULL REFERENCES disclosures (id),
    author        text        NOT NULL,
    first_at      timestamptz NOT NULL,
    PRIMARY KEY (disclosure_id, author)
);
COMMENT ON TABLE disclosure_authors IS 'Who edited a disclosure version (its creator is disclosures.created_by): none of them may review it.';

CREATE TABLE disclosure_reviews (
    id             bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    disclosure_id  bigint      NOT NULL REFERENCES disclosures (id),
    incident_id    bigint      NOT NULL,
    version        integer     NOT NULL,
    reviewer       text        NOT NULL,
    reviewed_at    timestamptz NOT NULL,
    content_sha256 bytea       NOT NULL
);
COMMENT ON TABLE disclosure_reviews IS 'Approvals of a disclosure version: who, when, and the SHA-256 of the title and body approved. '
    'A review counts only while the text is unchanged; a new version or an edit needs a new review.';
CREATE INDEX disclosure_reviews_disclosure ON disclosure_reviews (disclosure_id);
