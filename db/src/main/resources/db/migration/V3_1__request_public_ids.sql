-- Tenant-visible request ids are random (cmpl-/chatcmpl- + 24 base62 characters), not the engine's
-- sequential id: the row keeps the public id so that the audit endpoint can be asked with it.
ALTER TABLE requests ADD COLUMN public_id text;
CREATE UNIQUE INDEX requests_public_id ON requests (public_id);
COMMENT ON COLUMN requests.public_id IS 'The id the tenant was given (without its cmpl-/chatcmpl- prefix); null for rows from before V3.1 and for lab replays.';
