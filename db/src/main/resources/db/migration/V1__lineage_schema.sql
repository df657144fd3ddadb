-- Pagewarden audit schema: who owned, wrote and read every KV page, per request, per tenant.
-- kv_lineage is the high-rate table (written only by the COPY shipper); the others are small.

CREATE TABLE tenants (
    id           text        PRIMARY KEY,
    display_name text        NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE tenants IS 'Customers of the platform; every request, page owner and exposure is attributed to one.';
COMMENT ON COLUMN tenants.id IS 'Stable tenant key, the same string the engine puts in lineage events.';

CREATE TABLE requests (
    id               bigint      PRIMARY KEY,
    tenant_id        text        NOT NULL REFERENCES tenants (id),
    model            text        NOT NULL,
    prompt_tokens    integer     NOT NULL CHECK (prompt_tokens >= 0),
    generated_tokens integer     NOT NULL DEFAULT 0 CHECK (generated_tokens >= 0),
    status           text        NOT NULL CHECK (status IN ('QUEUED', 'ADMITTED', 'RESERVED', 'PREFILLING',
                                     'TRANSFERRING', 'READY', 'DECODING', 'FINISHED', 'REJECTED', 'ABORTED', 'FAILED')),
    error_code       text,
    received_at      timestamptz NOT NULL,
    admitted_at      timestamptz,
    first_token_at   timestamptz,
    finished_at      timestamptz,
    receipt_hash     bytea
);
COMMENT ON TABLE requests IS 'One row per inference request: the unit a tenant is billed for and an exposure is counted in.';
COMMENT ON COLUMN requests.id IS 'Engine request id; equals kv_lineage.request_id.';
COMMENT ON COLUMN requests.tenant_id IS 'Owner of the request: the tenant whose data its pages hold.';
COMMENT ON COLUMN requests.status IS 'Lifecycle state; FINISHED means a response was delivered (what blast radius counts as delivered).';
COMMENT ON COLUMN requests.error_code IS 'Why a REJECTED/ABORTED/FAILED request ended; NULL otherwise.';
COMMENT ON COLUMN requests.received_at IS 'When the platform received the request; bounds the request''s lineage in time.';
COMMENT ON COLUMN requests.finished_at IS 'When the response (or the error) left the platform.';
COMMENT ON COLUMN requests.receipt_hash IS 'Digest of the isolation receipt (pages, epochs and writers read, output hash).';
CREATE INDEX requests_tenant_received ON requests (tenant_id, received_at);

-- Kind codes are fixed here and in dev.pagewarden.db.journal.KindCodes, never enum ordinals,
-- so a reordered enum in the engine cannot silently relabel stored history.
CREATE TABLE lineage_kinds (
    code smallint PRIMARY KEY,
    name text     NOT NULL UNIQUE
);
COMMENT ON TABLE lineage_kinds IS 'Names of kv_lineage.kind codes (smallint keeps the hot table narrow).';
INSERT INTO lineage_kinds (code, name) VALUES
    (0, 'ALLOCATE'), (1, 'WRITE'), (2, 'TRANSFER_OUT'), (3, 'TRANSFER_IN'), (4, 'VERIFY'), (5, 'BIND_READ'),
    (6, 'RELEASE'), (7, 'DEFER'), (8, 'DRAIN'), (9, 'QUARANTINE'), (10, 'SCRUB');

-- The primary key must contain the partition key, so it is (event_id, event_time). That is as strong
-- as a key on event_id for idempotent shipping: a re-shipped event is byte-identical, carries the same
-- time, lands in the same partition and conflicts. It is also kinder than event_id alone if two engine
-- starts ever draw the same random id prefix: their different events keep both rows.
CREATE TABLE kv_lineage (
    event_id    bigint      NOT NULL,
    event_time  timestamptz NOT NULL,
    kind        smallint    NOT NULL,
    worker      text        NOT NULL,
    page        integer     NOT NULL,
    epoch       bigint      NOT NULL,
    request_id  bigint      NOT NULL,
    tenant_id   text,
    slot_from   integer     NOT NULL,
    slot_to     integer     NOT NULL,
    peer_worker text,
    peer_page   integer     NOT NULL,
    peer_epoch  bigint      NOT NULL,
    generation  integer     NOT NULL,
    checksum    integer     NOT NULL,
    ok          boolean     NOT NULL,
    PRIMARY KEY (event_id, event_time)
) PARTITION BY RANGE (event_time);
COMMENT ON TABLE kv_lineage IS 'One row per KV page life step (engine LineageEvent). One partition per UTC day, created ahead '
    'and dropped after the retention by the writer (PartitionManager); never deleted row by row.';
COMMENT ON COLUMN kv_lineage.event_id IS 'Engine event id, unique across engine restarts: duplicates from a replayed journal are ignored.';
COMMENT ON COLUMN kv_lineage.event_time IS 'When the step happened on the engine (microseconds); the partition key.';
COMMENT ON COLUMN kv_lineage.kind IS 'Page life step, see lineage_kinds.';
COMMENT ON COLUMN kv_lineage.worker IS 'Pool the page belongs to (prefill-0, decode-0): (worker, page) names a physical page.';
COMMENT ON COLUMN kv_lineage.page IS 'Physical page number within the worker''s pool.';
COMMENT ON COLUMN kv_lineage.epoch IS 'Allocation count of the page when this happened; (worker, page, epoch) names one ownership.';
COMMENT ON COLUMN kv_lineage.request_id IS 'Request concerned: the owner (ALLOCATE...), the writer (WRITE, TRANSFER_IN) or the reader (BIND_READ); 0 if none.';
COMMENT ON COLUMN kv_lineage.tenant_id IS 'Tenant of request_id; NULL if none. Not a foreign key: the audit must keep rows the platform tables never saw.';
COMMENT ON COLUMN kv_lineage.slot_from IS 'First token slot written/read (WRITE, TRANSFER_IN, BIND_READ); -1 otherwise.';
COMMENT ON COLUMN kv_lineage.slot_to IS 'One past the last slot written/read; -1 otherwise.';
COMMENT ON COLUMN kv_lineage.peer_worker IS 'Other end of a transfer: destination pool (TRANSFER_OUT) or source pool (TRANSFER_IN).';
COMMENT ON COLUMN kv_lineage.peer_page IS 'Page at the other end of a transfer; -1 otherwise.';
COMMENT ON COLUMN kv_lineage.peer_epoch IS 'Epoch of that page; -1 otherwise.';
COMMENT ON COLUMN kv_lineage.generation IS 'Transfer generation (TRANSFER_*, DEFER, DRAIN): tells a late write of an old generation from a current one.';
COMMENT ON COLUMN kv_lineage.checksum IS 'CRC32C of the page bytes (TRANSFER_*): sender and receiver values must agree.';
COMMENT ON COLUMN kv_lineage.ok IS 'VERIFY outcome; true for other kinds.';

-- Exposure finder, step 1: the reads in a time window.
CREATE INDEX kv_lineage_reads_by_time ON kv_lineage (event_time) WHERE kind = 5;
-- Exposure finder and request lineage, step 2: "last write on this physical page before time t",
-- walked backwards; the INCLUDE columns answer the slot test and the writer without a heap visit.
-- Kinds: WRITE (1), TRANSFER_IN (3), SCRUB (10, zeroes the whole page: nobody's data after it).
CREATE INDEX kv_lineage_writes_by_page ON kv_lineage (worker, page, event_time, event_id)
    INCLUDE (kind, slot_from, slot_to, request_id, tenant_id, epoch) WHERE kind IN (1, 3, 10);
-- Request lineage: everything a request did or read.
CREATE INDEX kv_lineage_by_request ON kv_lineage (request_id, event_time);
-- Transfer chain: the TRANSFER_IN / TRANSFER_OUT of one page epoch.
CREATE INDEX kv_lineage_transfers ON kv_lineage (worker, page, epoch) WHERE kind IN (2, 3);

CREATE TABLE safety_events (
    id         bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    event_time timestamptz NOT NULL,
    type       text        NOT NULL,
    severity   text        NOT NULL CHECK (severity IN ('WARNING', 'CRITICAL')),
    worker     text        NOT NULL,
    request_id bigint      NOT NULL,
    tenant_id  text,
    pages      integer[]   NOT NULL,
    epochs     bigint[]    NOT NULL,
    details    text        NOT NULL
);
COMMENT ON TABLE safety_events IS 'What the engine''s detectors saw (engine SafetyEvent): lets blast radius tell reads a detector stopped from responses delivered.';
COMMENT ON COLUMN safety_events.type IS 'Detector (OWNER_TAG_MISMATCH, UNWRITTEN_SLOT_READ, ...).';
COMMENT ON COLUMN safety_events.request_id IS 'Request concerned; 0 when none.';
COMMENT ON COLUMN safety_events.pages IS 'Physical pages involved, index-aligned with epochs.';
COMMENT ON COLUMN safety_events.epochs IS 'Epochs of those pages.';
CREATE INDEX safety_events_time ON safety_events (event_time);
CREATE INDEX safety_events_request ON safety_events (request_id);
