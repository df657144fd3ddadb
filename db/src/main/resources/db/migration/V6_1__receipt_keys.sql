-- Receipt public keys of every replica: a receipt names its key id, and any replica looks the key up here,
-- so a receipt signed on one replica verifies on every other. Rows are only added (insert-if-absent at
-- start) and retired; a key id names one key for good (ids end in the key's fingerprint).
CREATE TABLE receipt_keys (
    key_id      text        PRIMARY KEY,
    algorithm   text        NOT NULL,
    public_key  bytea       NOT NULL,
    node        text        NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    retired_at  timestamptz
);
COMMENT ON TABLE receipt_keys IS 'Public receipt signing keys of every replica, by key id (served at /.well-known/pagewarden-receipt-keys).';
COMMENT ON COLUMN receipt_keys.public_key IS 'X.509 SubjectPublicKeyInfo (DER).';
COMMENT ON COLUMN receipt_keys.node IS 'Node id of the replica that registered it first.';
COMMENT ON COLUMN receipt_keys.retired_at IS 'Set when the key is retired: receipts signed with it no longer verify.';
