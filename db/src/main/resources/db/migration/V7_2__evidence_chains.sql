-- Tamper evidence: every writer (platform replica) keeps its own hash chains, so no lock is shared between
-- replicas. Lineage is chained per shipped batch, the admin audit, incident entries, safety events and
-- disclosures per row (side table). Chain heads are signed with the receipt key at checkpoints. New tables
-- and nullable columns only: a replica of the previous release keeps writing (its rows are simply unchained).
-- The encodings the hashes cover are documented in docs/evidence.md.

ALTER TABLE kv_lineage ADD COLUMN chain text, ADD COLUMN chain_seq bigint;
COMMENT ON COLUMN kv_lineage.chain IS 'Lineage chain of the writer that shipped the row (lineage:<node>); NULL for rows of an unchained writer.';
COMMENT ON COLUMN kv_lineage.chain_seq IS 'Batch of that chain (lineage_batches.seq) the row was shipped in.';

CREATE TABLE lineage_batches (
    chain      text        NOT NULL,
    seq        bigint      NOT NULL CHECK (seq >= 1),
    day        date        NOT NULL,
    row_count  integer     NOT NULL CHECK (row_count > 0),
    first_time timestamptz NOT NULL,
    last_time  timestamptz NOT NULL,
    rows_hash  bytea       NOT NULL,
    prev_hash  bytea       NOT NULL,
    hash       bytea       NOT NULL,
    written_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (chain, seq)
);
COMMENT ON TABLE lineage_batches IS 'One row per lineage batch a shipper committed: SHA-256 of its rows and of its predecessor. '
    'Not partitioned: it outlives the kv_lineage partitions it describes.';
COMMENT ON COLUMN lineage_batches.day IS 'UTC day (kv_lineage partition) of every row of the batch: a batch never spans two days.';

CREATE TABLE chain_links (
    chain      text        NOT NULL,
    seq        bigint      NOT NULL CHECK (seq >= 1),
    table_name text        NOT NULL,
    row_id     bigint      NOT NULL,
    row_hash   bytea       NOT NULL,
    prev_hash  bytea       NOT NULL,
    hash       bytea       NOT NULL,
    linked_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (chain, seq)
);
COMMENT ON TABLE chain_links IS 'Hash chain of evidence rows (admin_audit, incident_entries, safety_events, disclosures), one chain '
    'per table and writer (<table>:<node>). A disclosure version gets a new link each time it changes state.';
CREATE INDEX chain_links_row ON chain_links (table_name, row_id);

CREATE TABLE chain_checkpoints (
    chain     text        NOT NULL,
    seq       bigint      NOT NULL,
    head      bytea       NOT NULL,
    at        timestamptz NOT NULL,
    key_id    text        NOT NULL,
    signature bytea       NOT NULL,
    PRIMARY KEY (chain, seq)
);
COMMENT ON TABLE chain_checkpoints IS 'Signed chain heads (Ed25519, receipt key), published at /.well-known/pagewarden-checkpoints.';
CREATE INDEX chain_checkpoints_at ON chain_checkpoints (at);

CREATE TABLE lineage_drop_summaries (
    chain      text        NOT NULL,
    day        date        NOT NULL,
    first_seq  bigint      NOT NULL,
    last_seq   bigint      NOT NULL,
    last_hash  bytea       NOT NULL,
    row_count  bigint      NOT NULL,
    dropped_at timestamptz NOT NULL,
    key_id     text        NOT NULL,
    signature  bytea       NOT NULL,
    PRIMARY KEY (chain, day, first_seq)
);
COMMENT ON TABLE lineage_drop_summaries IS 'Signed by the replica that dropped a kv_lineage partition past retention: the batches of each '
    'chain whose rows went with it, so the chain still verifies across the gap. A day dropped again (late rows re-created its '
    'partition) gets another summary for the batches since.';
