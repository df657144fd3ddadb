package dev.pagewarden.platform.security;

import dev.pagewarden.incident.AdminAccess;
import dev.pagewarden.incident.Blocking;
import dev.pagewarden.incident.audit.AdminAuditLog;
import dev.pagewarden.platform.error.ApiException;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.security.authentication.ReactiveAuthenticationManager;
import org.springframework.security.core.AuthenticationException;
import org.springframework.security.web.server.authentication.RedirectServerAuthenticationFailureHandler;
import org.springframework.security.web.server.authentication.ServerAuthenticationFailureHandler;
import org.springframework.stereotype.Component;
import org.springframework.web.server.WebFilter;
import reactor.core.publisher.Mono;

import java.util.List;
import java.util.Locale;

/**
 * Puts {@link AuthThrottle} in front of the admin UI login and the admin token: a refused attempt
 * is never checked (429 with Retry-After); failed attempts and lockouts go to the admin audit and to
 * {@code pagewarden_auth_failures_total{kind,outcome}} (outcome {@code failed}, {@code locked_out}:
 * the attempt that started a lockout, {@code throttled}: refused during one) for alerting. The throttle's
 * counts are shared by every replica (in PostgreSQL), so each check runs off the event loop.
 */
@Component
class AuthGuard {
    private static final Logger LOG = LoggerFactory.getLogger(AuthGuard.class);
    /** Reactor context key: the client's address, put there before authentication runs. */
    private static final String CLIENT = AuthGuard.class.getName() + ".client";
    static final String LOGIN = "login";
    static final String ADMIN_TOKEN = "admin_token";

    private final AuthThrottle throttle;
    private final ClientAddress addresses;
    private final AdminAuditLog audit;
    private final MeterRegistry meters;

    AuthGuard(AuthThrottle throttle, ClientAddress addresses, AdminAuditLog audit, MeterRegistry meters) {
        this.throttle = throttle;
        this.addresses = addresses;
        this.audit = audit;
        this.meters = meters;
    }

    /** Makes the client's address known to the guarded managers; add before the authentication filter. */
    WebFilter clientAddress() {
        return (exchange, chain) -> chain.filter(exchange)
                .contextWrite(ctx -> ctx.put(CLIENT, addresses.of(exchange.getRequest())));
    }

    /** The admin UI login, limited per account and per address. */
    ReactiveAuthenticationManager login(ReactiveAuthenticationManager delegate) {
        return attempt -> Mono.deferContextual(ctx -> {
            String address = ctx.getOrDefault(CLIENT, "unknown");
            String account = account(attempt.getName());
            return guarded(LOGIN, List.of(new AuthThrottle.Key(LOGIN, AuthThrottle.Scope.ACCOUNT, account),
                    new AuthThrottle.Key(LOGIN, AuthThrottle.Scope.ADDRESS, address)), Mono.defer(() -> delegate.authenticate(attempt)),
                    account, "from " + address);
        });
    }

    /** The admin API's bearer token, limited per address (the token is one secret shared by all callers). */
    ReactiveAuthenticationManager adminToken(ReactiveAuthenticationManager delegate) {
        return attempt -> Mono.deferContextual(ctx -> {
            String address = ctx.getOrDefault(CLIENT, "unknown");
            return guarded(ADMIN_TOKEN, List.of(new AuthThrottle.Key(ADMIN_TOKEN, AuthThrottle.Scope.ADDRESS, address)),
                    Mono.defer(() -> delegate.authenticate(attempt)), "admin token", "from " + address);
        });
    }

    private <T> Mono<T> guarded(String kind, List<AuthThrottle.Key> keys, Mono<T> check, String target, String details) {
        // the count may be in PostgreSQL (bounded by the throttle's timeout): off the event loop
        return Blocking.call(() -> throttle.attempt(keys)).flatMap(decision -> decided(kind, keys, decision, check, target, details));
    }

    private <T> Mono<T> decided(String kind, List<AuthThrottle.Key> keys, AuthThrottle.Decision decision, Mono<T> check,
                                String target, String details) {
        if (!decision.allowed() && decision.lockedNow().isEmpty()) {
            count(kind, "throttled");
            return Mono.error(new TooManyAttemptsException(decision.retryAfter()));
        }
        if (!decision.allowed()) {
            // this attempt is one too many: refused unchecked, and the lockout recorded
            count(kind, "locked_out");
            long seconds = ApiException.retryAfterSeconds(decision.retryAfter());
            return record(() -> decision.lockedNow().forEach(key -> {
                        String locked = key.scope().name().toLowerCase(Locale.ROOT) + " " + key.value();
                        LOG.warn("{} locked out for {} s: {} ({})", kind, seconds, locked, details);
                        audit.record("system", kind + ".lockout", locked,
                                "locked for " + seconds + " s after too many failures; last attempt " + details);
                    }))
                    .then(Mono.error(new TooManyAttemptsException(decision.retryAfter())));
        }
        return check.doOnNext(ok -> throttle.succeeded(keys))
                .onErrorResume(AuthenticationException.class, e -> {
                    count(kind, "failed");
                    return record(() -> audit.record("anonymous", kind + ".failure", target, details)).then(Mono.error(e));
                });
    }

    /** An audit write that cannot change the answer: the attempt stays refused even when the database is away. */
    private static Mono<Void> record(Runnable write) {
        return Blocking.run(write).onErrorResume(e -> {
            LOG.warn("could not record a refused attempt in the admin audit: {}", e.toString());
            return Mono.empty();
        });
    }

    private void count(String kind, String outcome) {
        Counter.builder("pagewarden.auth.failures").description("refused logins and admin-token attempts")
                .tag("kind", kind).tag("outcome", outcome).register(meters).increment();
    }

    /** The account as typed, trimmed to what a user name can be (the audit keeps it; names are lower case). */
    private static String account(String name) {
        String n = name == null ? "" : name.strip().toLowerCase(Locale.ROOT);
        return n.length() > 64 ? n.substring(0, 64) : n;
    }

    /**
     * The login form's failure handler: a throttled attempt is answered 429 with Retry-After and the
     * form saying so (the request goes on to the login page's POST handler); any other failure
     * redirects to {@code /admin/login?error}.
     */
    ServerAuthenticationFailureHandler loginFailure() {
        ServerAuthenticationFailureHandler wrong = new RedirectServerAuthenticationFailureHandler("/admin/login?error");
        return (webFilterExchange, e) -> {
            if (!(e instanceof TooManyAttemptsException t)) {
                return wrong.onAuthenticationFailure(webFilterExchange, e);
            }
            var exchange = webFilterExchange.getExchange();
            long seconds = ApiException.retryAfterSeconds(t.retryAfter());
            exchange.getResponse().setStatusCode(HttpStatus.TOO_MANY_REQUESTS);
            exchange.getResponse().getHeaders().set(HttpHeaders.RETRY_AFTER, Long.toString(seconds));
            exchange.getAttributes().put(AdminAccess.LOGIN_THROTTLED, seconds);
            return webFilterExchange.getChain().filter(exchange);
        };
    }
}
