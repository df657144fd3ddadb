-- Pagewarden platform: tenants' API keys and limits, model visibility, request records, engine id blocks.

ALTER TABLE tenants
    ADD COLUMN status              text    NOT NULL DEFAULT 'ACTIVE' CHECK (status IN ('ACTIVE', 'DISABLED')),
    ADD COLUMN requests_per_minute integer CHECK (requests_per_minute > 0),
    ADD COLUMN tokens_per_minute   integer CHECK (tokens_per_minute > 0),
    ADD COLUMN max_concurrent      integer CHECK (max_concurrent > 0),
    ADD COLUMN max_context         integer CHECK (max_context > 0);
COMMENT ON COLUMN tenants.requests_per_minute IS 'Per-tenant limit enforced before admission; NULL = no limit.';
COMMENT ON COLUMN tenants.tokens_per_minute IS 'Prompt + max_tokens charged per minute, unused tokens refunded; NULL = no limit.';
COMMENT ON COLUMN tenants.max_concurrent IS 'Requests of this tenant in the engine at once; NULL = no limit.';
COMMENT ON COLUMN tenants.max_context IS 'Most prompt + max_tokens one request may ask; never above the model''s effective window.';

CREATE TABLE api_keys (
    id         bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant_id  text        NOT NULL REFERENCES tenants (id),
    prefix     text        NOT NULL UNIQUE,
    salt       bytea       NOT NULL,
    hash       bytea       NOT NULL,
    name       text,
    created_at timestamptz NOT NULL DEFAULT now(),
    revoked_at timestamptz
);
COMMENT ON TABLE api_keys IS 'Tenant API keys. The key is shown once at creation; only its prefix (to identify it) and a '
    'salted SHA-256 of the secret are kept. A revoked key stays for the audit trail.';
CREATE INDEX api_keys_tenant ON api_keys (tenant_id);

CREATE TABLE model_visibility (
    model_id   text        PRIMARY KEY,
    private    boolean     NOT NULL,
    changed_at timestamptz NOT NULL DEFAULT now(),
    changed_by text        NOT NULL
);
COMMENT ON TABLE model_visibility IS 'Operator switch: a private model answers 503 model_unavailable on the tenant API.';

ALTER TABLE requests
    ADD COLUMN finish_reason text,
    ADD COLUMN stream        boolean NOT NULL DEFAULT false,
    ADD COLUMN receipt       text;
COMMENT ON COLUMN requests.receipt IS 'The signed isolation receipt in its compact form (pwr1....), as returned to the tenant.';

-- Each engine start takes one value; its request ids are (value << 32) + 1, + 2, ... so ids from several
-- engines and restarts never collide in kv_lineage and requests.
CREATE SEQUENCE engine_id_blocks START WITH 1;
