-- Admin sessions follow their user. Every request of a session reads the user's role, enabled flag and
-- session epoch: a role change applies to the next request, and disabling the user or changing or
-- resetting their password raises the epoch, which ends every session opened under the old one on every
-- replica. A password an admin set for someone else (a reset, or the generated first-start password) must
-- be changed before the session may do anything else. Expand only: replicas of the previous release
-- ignore both columns.
ALTER TABLE admin_users ADD COLUMN session_epoch integer NOT NULL DEFAULT 0;
ALTER TABLE admin_users ADD COLUMN must_change_password boolean NOT NULL DEFAULT false;
COMMENT ON COLUMN admin_users.session_epoch IS 'Raised when the user is disabled or their password changes or is reset: sessions opened under an older value are refused and deleted.';
COMMENT ON COLUMN admin_users.must_change_password IS 'Set by a reset (and for a generated first-start password): until the user chooses a new password their session may only do that.';

-- Four eyes reads who created, enabled or reset a reviewer's account, and when, for each review.
CREATE INDEX admin_audit_account_vouches ON admin_audit (target, at)
    WHERE action IN ('admin_user.create', 'admin_user.enable', 'admin_user.password_reset');
