-- Receipt key rotation at runtime. superseded_at: when the replica holding the key switched to a newer one (it
-- signs nothing with it any more). A key can be retired only once superseded, so a retired key never signed
-- anything after its retirement, and receipts it signed keep verifying. Expand only: replicas of the previous
-- release ignore the column.
ALTER TABLE receipt_keys ADD COLUMN superseded_at timestamptz;
COMMENT ON COLUMN receipt_keys.superseded_at IS 'Set when the replica holding the key rotated to a newer one: nothing is signed with it since.';
COMMENT ON COLUMN receipt_keys.retired_at IS 'Set when an operator retires the key (only once superseded): no replica signs with it again, receipts it signed still verify.';
