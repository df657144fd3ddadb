-- Public status updates of an incident (/status and its feeds): investigating -> identified -> monitoring ->
-- resolved, each a dated text an admin posted. Append-only: a posted update is public and never changes.
CREATE TABLE status_updates (
    id          bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    incident_id bigint      NOT NULL REFERENCES incidents (id),
    state       text        NOT NULL CHECK (state IN ('INVESTIGATING', 'IDENTIFIED', 'MONITORING', 'RESOLVED')),
    title       text        NOT NULL,
    body        text        NOT NULL,
    posted_at   timestamptz NOT NULL,
    posted_by   text        NOT NULL
);
CREATE INDEX status_updates_incident ON status_updates (incident_id, id);
COMMENT ON TABLE status_updates IS 'Public status updates of incidents, append-only (trigger); title is the public headline as of the update.';

CREATE FUNCTION status_updates_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'status update % is public and immutable', OLD.id;
END $$;
CREATE TRIGGER status_updates_immutable BEFORE UPDATE OR DELETE ON status_updates
    FOR EACH ROW EXECUTE FUNCTION status_updates_immutable();
