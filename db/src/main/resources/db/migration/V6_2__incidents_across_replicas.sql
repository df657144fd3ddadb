-- Several platform replicas on one database: every replica's lineage sweep runs the exposure finder and
-- files what it finds, and every replica keeps admin sessions. New tables only, so a replica of the
-- previous release runs against this schema unchanged.

CREATE TABLE incident_exposures (
    node             text        NOT NULL,
    worker           text        NOT NULL,
    page             integer     NOT NULL,
    read_epoch       bigint      NOT NULL,
    reader_request   bigint      NOT NULL,
    exposing_request bigint      NOT NULL,
    incident_id      bigint      REFERENCES incidents (id),
    filed_at         timestamptz NOT NULL,
    filed_by         text        NOT NULL,
    PRIMARY KEY (node, worker, page, read_epoch, reader_request, exposing_request)
);
COMMENT ON TABLE incident_exposures IS 'Exposures the lineage sweep has filed into an incident, one row per exposure: a replica claims '
    'a row (INSERT ... ON CONFLICT DO NOTHING) before filing it, so whichever replica sweeps, each exposure is filed once.';
COMMENT ON COLUMN incident_exposures.incident_id IS 'Set in the transaction that claimed the row (the incident is found or opened after the claim).';
COMMENT ON COLUMN incident_exposures.filed_by IS 'Node (replica) whose sweep filed it.';
CREATE INDEX incident_exposures_incident ON incident_exposures (incident_id);

CREATE TABLE lineage_sweep_position (
    id         boolean     PRIMARY KEY DEFAULT true CHECK (id),
    swept_to   timestamptz NOT NULL,
    swept_by   text        NOT NULL,
    updated_at timestamptz NOT NULL
);
COMMENT ON TABLE lineage_sweep_position IS 'One row: the lineage event time up to which a sweep (of any replica) has run the exposure '
    'finder. The next sweep, on whichever replica, starts shortly before it; it only ever moves forward.';

CREATE TABLE admin_sessions (
    id_hash          bytea       PRIMARY KEY,
    created_at       timestamptz NOT NULL,
    last_access      timestamptz NOT NULL,
    max_idle_seconds integer     NOT NULL,
    expires_at       timestamptz NOT NULL,
    attributes       bytea       NOT NULL
);
COMMENT ON TABLE admin_sessions IS 'Admin UI sessions, shared by every replica. Keyed by the SHA-256 of the session id, so reading '
    'the table does not give out live session cookies.';
COMMENT ON COLUMN admin_sessions.attributes IS 'The session attributes (security context, CSRF token) in Java serialization; '
    'read back only through an allow-list of JDK and Spring Security classes.';
CREATE INDEX admin_sessions_expires ON admin_sessions (expires_at);
