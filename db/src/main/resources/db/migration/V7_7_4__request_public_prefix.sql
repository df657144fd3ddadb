-- The tenant saw its id with a prefix that names the endpoint (cmpl-, chatcmpl-): keep it, so that pages and
-- notices can show the exact id the tenant holds.
ALTER TABLE requests ADD COLUMN public_prefix text;
COMMENT ON COLUMN requests.public_prefix IS 'The prefix of the id the tenant was given (cmpl-, chatcmpl-); null for rows from before V7.7.4 and for lab replays.';
