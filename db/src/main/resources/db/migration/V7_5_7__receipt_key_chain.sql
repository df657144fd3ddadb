-- Receipt key chain: every key after a replica's first is endorsed by the key it replaced (Ed25519 over the new
-- key's id, public key, the previous key's id and the time). Verifiers trust a key only through such a chain from
-- a root pinned outside this database, so a row inserted here by someone without a root's private key is never
-- trusted. Nullable columns only: a replica of the previous release keeps registering its (unendorsed) keys.
ALTER TABLE receipt_keys ADD COLUMN endorsed_by text, ADD COLUMN endorsed_at timestamptz, ADD COLUMN endorsement bytea;
COMMENT ON COLUMN receipt_keys.endorsed_by IS 'The key this one replaced, which signed the endorsement; NULL for a chain''s first key.';
COMMENT ON COLUMN receipt_keys.endorsed_at IS 'When this key replaced endorsed_by (signed): endorsed_by signs nothing issued after it.';
COMMENT ON COLUMN receipt_keys.endorsement IS 'Ed25519 signature by endorsed_by (see docs/evidence.md, key chain).';
