-- Pagewarden admin UI: admin users, the admin audit trail, incidents and their timelines,
-- disclosures (immutable once published), per-tenant notices, tenant webhooks and deliveries.

CREATE TABLE admin_users (
    id            bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    username      text        NOT NULL UNIQUE CHECK (username ~ '^[a-z0-9._-]{2,64}$'),
    password_hash text        NOT NULL,
    role          text        NOT NULL CHECK (role IN ('VIEWER', 'RESPONDER', 'PUBLISHER', 'ADMIN')),
    enabled       boolean     NOT NULL DEFAULT true,
    created_at    timestamptz NOT NULL DEFAULT now(),
    created_by    text        NOT NULL
);
COMMENT ON TABLE admin_users IS 'Operators of the admin UI. Passwords as DelegatingPasswordEncoder strings ({bcrypt}...). '
    'Roles are cumulative: viewer < responder < publisher < admin.';

CREATE TABLE admin_audit (
    id      bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at      timestamptz NOT NULL DEFAULT now(),
    actor   text        NOT NULL,
    action  text        NOT NULL,
    target  text,
    details text
);
COMMENT ON TABLE admin_audit IS 'Every admin action (who, what, when), whether from the UI or /admin/api.';
CREATE INDEX admin_audit_at ON admin_audit (at DESC);

CREATE TABLE incidents (
    id          bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    title       text        NOT NULL,
    model_id    text,
    worker      text        NOT NULL,
    status      text        NOT NULL CHECK (status IN ('INVESTIGATING', 'IDENTIFIED', 'MITIGATED', 'RESOLVED')),
    severity    text        NOT NULL CHECK (severity IN ('CRITICAL', 'WARNING')),
    opened_at   timestamptz NOT NULL,
    first_event timestamptz NOT NULL,
    last_event  timestamptz NOT NULL,
    resolved_at timestamptz,
    events      integer     NOT NULL DEFAULT 0
);
COMMENT ON TABLE incidents IS 'Opened by a safety event, or attached to when an open one exists for the same model/worker '
    'and its last event is within the attach window. The blast-radius window is computed from first_event/last_event.';
CREATE INDEX incidents_open ON incidents (model_id, worker) WHERE status <> 'RESOLVED';

CREATE TABLE incident_entries (
    id          bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    incident_id bigint      NOT NULL REFERENCES incidents (id),
    at          timestamptz NOT NULL,
    kind        text        NOT NULL CHECK (kind IN ('DETECTOR', 'ACTION', 'NOTE')),
    actor       text        NOT NULL,
    text        text        NOT NULL
);
CREATE INDEX incident_entries_incident ON incident_entries (incident_id, at);

CREATE TABLE disclosures (
    id           bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    incident_id  bigint      NOT NULL REFERENCES incidents (id),
    version      integer     NOT NULL,
    status       text        NOT NULL CHECK (status IN ('DRAFT', 'IN_REVIEW', 'PUBLISHED')),
    title        text        NOT NULL,
    body         text        NOT NULL,
    created_at   timestamptz NOT NULL,
    created_by   text        NOT NULL,
    reviewed_by  text,
    published_at timestamptz,
    published_by text,
    UNIQUE (incident_id, version)
);
COMMENT ON TABLE disclosures IS 'Markdown disclosures. A published row never changes (trigger); a correction is a new version.';

CREATE FUNCTION disclosures_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF OLD.status = 'PUBLISHED' THEN
        RAISE EXCEPTION 'disclosure % version % is published and immutable', OLD.incident_id, OLD.version;
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER disclosures_immutable BEFORE UPDATE OR DELETE ON disclosures
    FOR EACH ROW EXECUTE FUNCTION disclosures_immutable();

CREATE TABLE tenant_notices (
    id            bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    disclosure_id bigint      NOT NULL REFERENCES disclosures (id),
    tenant_id     text        NOT NULL, -- like lineage and requests rows, not a foreign key: a notice outlives its tenant
    created_at    timestamptz NOT NULL,
    relation      text        NOT NULL,
    UNIQUE (disclosure_id, tenant_id)
);
COMMENT ON COLUMN tenant_notices.relation IS 'Why this tenant is told: exposed (its data was read), received (it read others'' data), or both.';

CREATE TABLE tenant_webhooks (
    tenant_id  text        PRIMARY KEY,
    url        text        NOT NULL,
    secret     text        NOT NULL,
    updated_at timestamptz NOT NULL
);

CREATE TABLE webhook_deliveries (
    id              bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    notice_id       bigint      NOT NULL REFERENCES tenant_notices (id),
    url             text        NOT NULL,
    status          text        NOT NULL CHECK (status IN ('PENDING', 'DELIVERED', 'FAILED')),
    attempts        integer     NOT NULL DEFAULT 0,
    last_attempt_at timestamptz,
    last_status     integer,
    last_error      text
);
