-- Evidence that outlives the lineage retention: explicit legal holds on lineage partitions, and the blast
-- radius of each published disclosure stored (frozen) and signed at publication. New tables only, so a
-- replica of the previous release runs against this schema unchanged.

CREATE TABLE legal_holds (
    id          bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    hold_from   timestamptz NOT NULL,
    hold_to     timestamptz NOT NULL,
    reason      text        NOT NULL CHECK (length(reason) > 0),
    created_at  timestamptz NOT NULL,
    created_by  text        NOT NULL,
    released_at timestamptz,
    released_by text,
    CHECK (hold_from < hold_to)
);
COMMENT ON TABLE legal_holds IS 'Time ranges whose kv_lineage partitions retention must not drop while the hold is not released.';
COMMENT ON COLUMN legal_holds.released_at IS 'When the hold was released; the next partition maintenance may then drop what it kept.';
CREATE INDEX legal_holds_active ON legal_holds (hold_from) WHERE released_at IS NULL;

CREATE TABLE frozen_blast_radius (
    disclosure_id  bigint      PRIMARY KEY REFERENCES disclosures (id),
    incident_id    bigint      NOT NULL REFERENCES incidents (id),
    window_from    timestamptz NOT NULL,
    window_to      timestamptz NOT NULL,
    model_id       text,
    node           text        NOT NULL,
    worker         text        NOT NULL,
    frozen_at      timestamptz NOT NULL,
    canonical      text        NOT NULL,
    digest         bytea       NOT NULL,
    key_id         text        NOT NULL,
    signature      bytea       NOT NULL
);
COMMENT ON TABLE frozen_blast_radius IS 'The affected set of a disclosure as computed from lineage when it was published: what its notices, '
    'the incident page and receipt checks answer from once the lineage is gone. One row per published disclosure version.';
COMMENT ON COLUMN frozen_blast_radius.canonical IS 'The affected set in its canonical text form (docs/evidence.md); digest is its SHA-256.';
COMMENT ON COLUMN frozen_blast_radius.signature IS 'Ed25519 signature of digest with the receipt key key_id (/.well-known/pagewarden-receipt-keys).';
CREATE INDEX frozen_blast_radius_window ON frozen_blast_radius (window_from, window_to);

CREATE TABLE frozen_blast_radius_requests (
    disclosure_id     bigint  NOT NULL REFERENCES frozen_blast_radius (disclosure_id),
    request_id        bigint  NOT NULL,
    tenant_id         text,
    side              text    NOT NULL CHECK (side IN ('reader', 'exposed')),
    status            text,
    counterparts      bigint[] NOT NULL,
    counterpart_tenants text[] NOT NULL,
    PRIMARY KEY (disclosure_id, side, request_id)
);
COMMENT ON TABLE frozen_blast_radius_requests IS 'The frozen set row by row: a reader request that read other tenants'' KV data '
    '(counterparts: whose requests wrote it), or an exposed request whose data was read (counterparts: the readers).';
CREATE INDEX frozen_blast_radius_requests_request ON frozen_blast_radius_requests (request_id);

CREATE TABLE frozen_blast_radius_drift (
    disclosure_id     bigint      NOT NULL REFERENCES frozen_blast_radius (disclosure_id),
    recomputed_digest bytea       NOT NULL,
    seen_at           timestamptz NOT NULL,
    seen_by           text        NOT NULL,
    details           text        NOT NULL,
    PRIMARY KEY (disclosure_id, recomputed_digest)
);
COMMENT ON TABLE frozen_blast_radius_drift IS 'A recomputation of a frozen blast radius that came out different; each distinct result once, '
    'raised as a safety event (blast-radius-drift) when first seen. The notices keep the frozen set.';

-- Partition maintenance writes a hold row only when what holds a partition changed since its last one.
CREATE INDEX admin_audit_lineage_holds ON admin_audit (target, id) WHERE action = 'lineage.partition-held';
