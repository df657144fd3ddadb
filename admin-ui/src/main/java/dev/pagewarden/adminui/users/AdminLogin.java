package dev.pagewarden.adminui.users;

import dev.pagewarden.incident.Blocking;
import org.springframework.security.authentication.BadCredentialsException;
import org.springframework.security.authentication.ReactiveAuthenticationManager;
import org.springframework.security.core.Authentication;
import org.springframework.security.crypto.password.PasswordEncoder;
import reactor.core.publisher.Mono;

import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.Optional;

/**
 * The login form's check, the same work for every answer: an unknown or disabled user's password is
 * still checked against a dummy hash of the same cost, so the time taken does not tell which user
 * names exist; every refusal is the same {@link BadCredentialsException}. Hashing runs off the event loop.
 * The login it gives names the user and the session epoch it was opened under (see {@link SessionAuthorization}),
 * never the password hash: that would otherwise be kept in the session row.
 */
public final class AdminLogin implements ReactiveAuthenticationManager {
    private final AdminUserService users;
    private final PasswordEncoder encoder;
    private final String dummyHash;

    public AdminLogin(AdminUserService users, PasswordEncoder encoder) {
        this.users = users;
        this.encoder = encoder;
        byte[] random = new byte[16];
        new SecureRandom().nextBytes(random);
        this.dummyHash = encoder.encode(HexFormat.of().formatHex(random)); // at start: bcrypt's cost, never on a request
    }

    @Override
    public Mono<Authentication> authenticate(Authentication attempt) {
        String name = attempt.getName();
        String password = attempt.getCredentials() == null ? "" : attempt.getCredentials().toString();
        return Blocking.call(() -> {
            Optional<AdminUserService.Credentials> user = users.loadUser(name);
            boolean matches = encoder.matches(password, user.map(AdminUserService.Credentials::passwordHash).orElse(dummyHash));
            if (!matches || user.isEmpty() || !user.get().enabled()) {
                throw new BadCredentialsException("Wrong username or password, or the user is disabled");
            }
            return SessionAuthorization.login(user.get());
        });
    }
}
