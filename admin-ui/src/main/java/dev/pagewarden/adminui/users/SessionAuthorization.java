package dev.pagewarden.adminui.users;

import dev.pagewarden.incident.Blocking;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.security.authentication.UsernamePasswordAuthenticationToken;
import org.springframework.security.core.Authentication;
import org.springframework.security.core.GrantedAuthority;
import org.springframework.security.core.authority.AuthorityUtils;
import org.springframework.security.core.context.SecurityContext;
import org.springframework.security.core.context.SecurityContextImpl;
import org.springframework.security.web.server.context.ServerSecurityContextRepository;
import org.springframework.security.web.server.context.WebSessionServerSecurityContextRepository;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebSession;
import reactor.core.publisher.Mono;

import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * An admin session's login, authorized again on every request from the user's row in PostgreSQL (which every
 * replica shares), so a change made on any replica applies to the very next request on all of them: a new
 * role at once; a disabled or removed user, or a session opened before the user's password was changed or
 * reset (its session epoch is older), is refused and the session deleted. A user whose password must be
 * changed gets only {@link #PASSWORD_CHANGE_REQUIRED}, which no role rule admits: the session can change the
 * password and nothing else. No cache: one indexed read per admin request, off the event loop, time-limited.
 *
 * <p>The login kept in the session names the user and the epoch it was opened under, and no roles that count:
 * they are replaced from the database on each load.
 */
public final class SessionAuthorization implements ServerSecurityContextRepository {
    /** The only authority of a session whose password must be changed first. */
    public static final String PASSWORD_CHANGE_REQUIRED = "PASSWORD_CHANGE_REQUIRED";
    private static final Logger LOG = LoggerFactory.getLogger(SessionAuthorization.class);

    private final AdminUserService users;
    private final Duration timeout;
    private final ServerSecurityContextRepository sessions = new WebSessionServerSecurityContextRepository();

    /** @param timeout the most one read of the user's row may take */
    public SessionAuthorization(AdminUserService users, Duration timeout) {
        this.users = users;
        this.timeout = timeout;
    }

    /** The login for this user as the database has them now: name, epoch (the details) and authorities. */
    static Authentication login(AdminUserService.Credentials user) {
        List<GrantedAuthority> authorities = user.mustChangePassword()
                ? AuthorityUtils.createAuthorityList(PASSWORD_CHANGE_REQUIRED) : user.role().authorities();
        UsernamePasswordAuthenticationToken token = UsernamePasswordAuthenticationToken.authenticated(user.username(), null,
                authorities);
        token.setDetails(user.sessionEpoch());
        return token;
    }

    /** True for a login that may only change its password. */
    public static boolean mustChangePassword(Authentication auth) {
        return auth != null && auth.getAuthorities().stream().anyMatch(a -> PASSWORD_CHANGE_REQUIRED.equals(a.getAuthority()));
    }

    @Override
    public Mono<Void> save(ServerWebExchange exchange, SecurityContext context) {
        return sessions.save(exchange, context);
    }

    @Override
    public Mono<SecurityContext> load(ServerWebExchange exchange) {
        return sessions.load(exchange).flatMap(context -> {
            Authentication stored = context.getAuthentication();
            if (stored == null) {
                return Mono.just(context);
            }
            return current(stored.getName()).flatMap(user -> {
                Optional<String> refused = refusal(stored, user);
                if (refused.isPresent()) {
                    LOG.info("admin session of '{}' ended: {}", stored.getName(), refused.get());
                    return exchange.getSession().flatMap(WebSession::invalidate).then(Mono.<SecurityContext>empty());
                }
                return Mono.just(new SecurityContextImpl(login(user.orElseThrow())));
            });
        });
    }

    private Mono<Optional<AdminUserService.Credentials>> current(String username) {
        return Blocking.call(() -> users.loadUser(username)).timeout(timeout);
    }

    /** Why the stored login no longer holds; empty when it does. */
    private static Optional<String> refusal(Authentication stored, Optional<AdminUserService.Credentials> user) {
        if (!(stored.getDetails() instanceof Integer epoch)) {
            return Optional.of("the session was opened by an earlier release"); // no epoch to compare: log in again
        }
        if (user.isEmpty()) {
            return Optional.of("the user no longer exists");
        }
        if (!user.get().enabled()) {
            return Optional.of("the user is disabled");
        }
        if (user.get().sessionEpoch() != epoch) {
            return Optional.of("the password was changed or reset, or the user was disabled, after the login");
        }
        return Optional.empty();
    }

    /**
     * After the user changed their own password: this session goes on under the new epoch (its other sessions
     * end), with a new session id.
     */
    public Mono<Void> renew(ServerWebExchange exchange, String username) {
        return current(username).flatMap(user -> user.isEmpty() ? Mono.empty()
                : exchange.getSession().flatMap(WebSession::changeSessionId)
                .then(sessions.save(exchange, new SecurityContextImpl(login(user.get())))));
    }
}
