-- Login and admin-token guessing counts shared by every platform replica, so N replicas do not allow N times
-- the guesses. One row per counted key (kind: login or admin_token; scope: account or address; the value).
-- Times come from the replicas' clocks. Rows nobody touched for long are deleted by the replicas.
CREATE TABLE auth_throttle (
    kind         text        NOT NULL,
    scope        text        NOT NULL,
    value        text        NOT NULL,
    failures     integer     NOT NULL DEFAULT 0,
    window_start timestamptz,
    lockouts     integer     NOT NULL DEFAULT 0,
    locked_until timestamptz,
    touched_at   timestamptz NOT NULL,
    PRIMARY KEY (kind, scope, value)
);
CREATE INDEX auth_throttle_touched ON auth_throttle (touched_at);
COMMENT ON TABLE auth_throttle IS 'Failed login / admin-token attempts and lockouts per account or client address, shared by all replicas.';
COMMENT ON COLUMN auth_throttle.failures IS 'Attempts counted within the window that started at window_start.';
COMMENT ON COLUMN auth_throttle.lockouts IS 'Lockouts so far; each further one doubles, up to the maximum lockout.';
