package dev.pagewarden.adminui.users;

import dev.pagewarden.incident.AdminProperties;
import dev.pagewarden.incident.audit.AdminAuditLog;
import dev.pagewarden.incident.input.InvalidTextException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.ApplicationArguments;
import org.springframework.boot.ApplicationRunner;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.security.crypto.factory.PasswordEncoderFactories;
import org.springframework.security.crypto.password.PasswordEncoder;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

import java.security.SecureRandom;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Admin users in PostgreSQL, passwords hashed by a {@link PasswordEncoder} that names its algorithm
 * ({bcrypt} today, upgradable later). On first start, with no admin user at all, creates {@code admin}
 * with {@code pagewarden.admin.initial-password} or a random password printed once in the log (which
 * must then be changed at the first login, like a password an admin reset).
 *
 * <p>Each user has a session epoch: disabling the user, or changing or resetting their password, raises
 * it, and {@link SessionAuthorization} refuses every session opened under an older one.
 */
@Service
public class AdminUserService implements ApplicationRunner {
    private static final Logger LOG = LoggerFactory.getLogger(AdminUserService.class);
    private static final Pattern NAME = Pattern.compile("[a-z0-9._-]{2,64}");
    static final int MIN_PASSWORD = 12;
    /** The admin token acts under this name: no user may take it (four eyes counts the token as one person). */
    static final String RESERVED = "admin-token";

    private final JdbcClient jdbc;
    private final AdminAuditLog audit;
    private final AdminProperties properties;
    private final PasswordEncoder encoder = PasswordEncoderFactories.createDelegatingPasswordEncoder();

    AdminUserService(JdbcClient jdbc, AdminAuditLog audit, AdminProperties properties) {
        this.jdbc = jdbc;
        this.audit = audit;
        this.properties = properties;
    }

    public PasswordEncoder passwordEncoder() {
        return encoder;
    }

    @Override
    public void run(ApplicationArguments args) {
        createInitialAdmin();
    }

    /** Creates the first admin when there is none; returns whether it did. */
    @Transactional
    public boolean createInitialAdmin() {
        long count = jdbc.sql("SELECT count(*) FROM admin_users").query(Long.class).single();
        if (count > 0) {
            return false;
        }
        String configured = properties.initialPassword();
        boolean generated = configured == null || configured.isBlank();
        String password = generated ? randomPassword() : configured;
        // a password printed in the log is known to whoever reads the log: it must be changed at once
        insert("admin", password, AdminRole.ADMIN, "first-start", generated);
        audit.record("system", "admin_user.create", "admin", "initial admin, role admin");
        if (generated) {
            // printed once: the hash is all that is kept
            LOG.warn("Created the initial admin user 'admin' with one-time password: {}  (log in at /admin and "
                    + "add named users; set pagewarden.admin.initial-password to choose it instead)", password);
        } else {
            LOG.info("Created the initial admin user 'admin' with the password from pagewarden.admin.initial-password");
        }
        return true;
    }

    @Transactional
    public AdminUser create(String username, String password, AdminRole role, String actor) {
        if (username == null || !NAME.matcher(username).matches()) {
            throw new InvalidTextException("username", "username must be 2-64 characters of a-z, 0-9, '.', '_' or '-'");
        }
        if (RESERVED.equals(username)) {
            throw new InvalidTextException("username", "'" + RESERVED + "' is the admin token's name in the audit and in "
                    + "four-eyes reviews; choose another");
        }
        if (findByName(username).isPresent()) {
            throw new IllegalArgumentException("an admin user named '" + username + "' already exists");
        }
        insert(username, password, role, actor, false);
        audit.record(actor, "admin_user.create", username, "role " + role.label());
        return findByName(username).orElseThrow();
    }

    private void insert(String username, String password, AdminRole role, String actor, boolean mustChange) {
        requireStrong(password);
        jdbc.sql("""
                INSERT INTO admin_users (username, password_hash, role, created_by, must_change_password)
                VALUES (:u, :h, :r, :by, :m)""")
                .param("u", username).param("h", encoder.encode(password)).param("r", role.name()).param("by", actor)
                .param("m", mustChange).update();
    }

    private static void requireStrong(String password) {
        if (password == null || password.length() < MIN_PASSWORD) {
            throw new IllegalArgumentException("password must be at least " + MIN_PASSWORD + " characters");
        }
    }

    @Transactional
    public AdminUser setRole(String username, AdminRole role, String actor) {
        AdminUser user = require(username);
        if (user.role() == AdminRole.ADMIN && role != AdminRole.ADMIN) {
            requireAnotherEnabledAdmin(username);
        }
        jdbc.sql("UPDATE admin_users SET role = :r WHERE username = :u").param("r", role.name()).param("u", username).update();
        audit.record(actor, "admin_user.role", username, user.role().label() + " -> " + role.label());
        return require(username);
    }

    @Transactional
    public AdminUser setEnabled(String username, boolean enabled, String actor) {
        AdminUser user = require(username);
        if (!enabled && user.role() == AdminRole.ADMIN) {
            requireAnotherEnabledAdmin(username);
        }
        // disabling ends the user's sessions for good: enabling again does not bring them back
        jdbc.sql("UPDATE admin_users SET enabled = :e, session_epoch = session_epoch + CASE WHEN :e THEN 0 ELSE 1 END "
                + "WHERE username = :u").param("e", enabled).param("u", username).update();
        audit.record(actor, enabled ? "admin_user.enable" : "admin_user.disable", username, null);
        return require(username);
    }

    /**
     * The user's own password change: the current password is required, the new one must differ. Ends the
     * user's other sessions (the epoch rises); returns the new epoch, for the session that made the change.
     */
    @Transactional
    public int changePassword(String username, String current, String next) {
        Credentials user = loadUser(username).orElseThrow(() -> new IllegalArgumentException("no admin user '" + username + "'"));
        if (current == null || !encoder.matches(current, user.passwordHash())) {
            throw new IllegalArgumentException("the current password is wrong");
        }
        requireStrong(next);
        if (next.equals(current)) {
            throw new IllegalArgumentException("the new password must differ from the current one");
        }
        int epoch = jdbc.sql("""
                UPDATE admin_users SET password_hash = :h, must_change_password = false, session_epoch = session_epoch + 1
                WHERE username = :u RETURNING session_epoch""")
                .param("h", encoder.encode(next)).param("u", username).query(Integer.class).single();
        audit.record(username, "admin_user.password_change", username, null);
        return epoch;
    }

    /**
     * An admin resets someone else's password: returns a new one-time password (shown once, never stored in
     * clear) that must be changed at the next login. Ends every session of that user.
     */
    @Transactional
    public String resetPassword(String username, String actor) {
        require(username);
        if (username.equals(actor)) {
            throw new IllegalArgumentException("change your own password on the Password page (it needs the current one)");
        }
        String password = randomPassword();
        jdbc.sql("""
                UPDATE admin_users SET password_hash = :h, must_change_password = true, session_epoch = session_epoch + 1
                WHERE username = :u""").param("h", encoder.encode(password)).param("u", username).update();
        audit.record(actor, "admin_user.password_reset", username, "one-time password, to be changed at the next login");
        return password;
    }

    /** Nobody may lock the platform out of its own administration. */
    private void requireAnotherEnabledAdmin(String username) {
        long others = jdbc.sql("SELECT count(*) FROM admin_users WHERE role = 'ADMIN' AND enabled AND username <> :u")
                .param("u", username).query(Long.class).single();
        if (others == 0) {
            throw new IllegalArgumentException("'" + username + "' is the last enabled admin: add another admin first");
        }
    }

    public List<AdminUser> list() {
        return jdbc.sql("""
                SELECT id, username, role, enabled, created_at, created_by, must_change_password FROM admin_users
                ORDER BY username""")
                .query((rs, i) -> new AdminUser(rs.getLong(1), rs.getString(2), AdminRole.valueOf(rs.getString(3)),
                        rs.getBoolean(4), rs.getTimestamp(5).toInstant(), rs.getString(6), rs.getBoolean(7)))
                .list();
    }

    public Optional<AdminUser> findByName(String username) {
        return list().stream().filter(u -> u.username().equals(username)).findFirst();
    }

    private AdminUser require(String username) {
        return findByName(username).orElseThrow(() -> new IllegalArgumentException("no admin user '" + username + "'"));
    }

    /**
     * What a login and each request of a session check: the password hash, the role, whether the user is
     * enabled, the session epoch and whether the password must be changed first.
     */
    public record Credentials(String username, String passwordHash, AdminRole role, boolean enabled, int sessionEpoch,
                              boolean mustChangePassword) {
    }

    /** For the login form and each session request; empty for a name no user can have. */
    public Optional<Credentials> loadUser(String username) {
        if (username == null || !NAME.matcher(username).matches()) {
            return Optional.empty(); // no such user can exist; and a NUL would make PostgreSQL fail the login with a 500
        }
        return jdbc.sql("""
                SELECT username, password_hash, role, enabled, session_epoch, must_change_password FROM admin_users
                WHERE username = :u""")
                .param("u", username)
                .query((rs, i) -> new Credentials(rs.getString(1), rs.getString(2), AdminRole.valueOf(rs.getString(3)),
                        rs.getBoolean(4), rs.getInt(5), rs.getBoolean(6)))
                .optional();
    }

    private static String randomPassword() {
        String alphabet = "abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789";
        SecureRandom random = new SecureRandom();
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < 20; i++) {
            sb.append(alphabet.charAt(random.nextInt(alphabet.length())));
        }
        return sb.toString();
    }
}
