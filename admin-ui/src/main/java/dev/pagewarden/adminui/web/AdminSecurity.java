package dev.pagewarden.adminui.web;

import dev.pagewarden.adminui.AdminUiProperties;
import dev.pagewarden.adminui.Blocking;
import dev.pagewarden.adminui.audit.AdminAuditLog;
import dev.pagewarden.adminui.users.AdminLogin;
import dev.pagewarden.adminui.users.AdminUserService;
import org.springframework.http.HttpMethod;
import org.springframework.security.authentication.ReactiveAuthenticationManager;
import org.springframework.security.config.web.server.ServerHttpSecurity;
import org.springframework.security.core.context.ReactiveSecurityContextHolder;
import org.springframework.security.core.context.SecurityContext;
import org.springframework.security.web.server.csrf.ServerCsrfTokenRequestHandler;
import org.springframework.security.web.server.csrf.XorServerCsrfTokenRequestAttributeHandler;
import org.springframework.stereotype.Component;
import org.springframework.web.server.WebFilter;
import reactor.core.publisher.Mono;

import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;

/**
 * The admin UI's security pieces, used by the platform's security configuration: the login
 * authentication manager (admin users in PostgreSQL), the URL rules by role, the session idle
 * timeout, and a filter that records every state-changing {@code /admin/api} call in the admin audit.
 */
@Component
public class AdminSecurity {
    private final AdminLogin login;
    private final AdminAuditLog audit;
    private final AdminUiProperties properties;
    private final XorServerCsrfTokenRequestAttributeHandler csrf = new XorServerCsrfTokenRequestAttributeHandler();

    AdminSecurity(AdminUserService users, AdminAuditLog audit, AdminUiProperties properties) {
        this.login = new AdminLogin(users, users.passwordEncoder());
        this.audit = audit;
        this.properties = properties;
        try {
            SecureRandom random = SecureRandom.getInstance("DRBG");
            random.nextBytes(new byte[16]); // seeds now, never on a request thread
            csrf.setSecureRandom(random);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("no DRBG SecureRandom in this JDK", e);
        }
    }

    /** Attribute on a login POST the throttle refused: seconds until the next attempt is heard. */
    public static final String LOGIN_THROTTLED = AdminSecurity.class.getName() + ".loginThrottled";

    /** Checks admin users' passwords in constant work per attempt (see {@link AdminLogin}); one instance, built at start. */
    public ReactiveAuthenticationManager loginManager() {
        return login;
    }

    /**
     * Who may do what in the UI: reading needs viewer; acting (incident workflow, take-down, drafts,
     * lab) responder; publishing a disclosure publisher; users and tenants admin.
     */
    public static void uiRules(ServerHttpSecurity.AuthorizeExchangeSpec a) {
        a.pathMatchers("/admin/login", "/admin/assets/**").permitAll()
                .pathMatchers(HttpMethod.POST, "/admin/users/**", "/admin/tenants/**").hasRole("ADMIN")
                .pathMatchers(HttpMethod.POST, "/admin/disclosures/*/publish").hasRole("PUBLISHER")
                .pathMatchers(HttpMethod.POST, "/admin/**").hasRole("RESPONDER")
                .pathMatchers("/admin/users", "/admin/users/**").hasRole("ADMIN")
                .anyExchange().hasRole("VIEWER");
    }

    /** The same for {@code /admin/api}: lab replay is a responder's action; other writes stay admin-only. */
    public static void apiRules(ServerHttpSecurity.AuthorizeExchangeSpec a) {
        a.pathMatchers(HttpMethod.GET, "/admin/api/**").hasRole("VIEWER")
                .pathMatchers(HttpMethod.POST, "/admin/api/lab/**").hasRole("RESPONDER")
                .anyExchange().hasRole("ADMIN");
    }

    /**
     * The CSRF token handler (BREACH-safe masking) with a random source seeded here, at start: the
     * default one reads the OS entropy source on each token, which would block an event-loop thread.
     */
    public ServerCsrfTokenRequestHandler csrfHandler() {
        return csrf;
    }

    /** Sessions end after {@code pagewarden.admin.session-timeout} without a request. */
    public WebFilter sessionTimeout() {
        return (exchange, chain) -> exchange.getSession()
                .doOnNext(s -> s.setMaxIdleTime(properties.sessionTimeout()))
                .then(chain.filter(exchange));
    }

    /** Records each successful non-GET {@code /admin/api} call (who, method and path, status). */
    public WebFilter apiAudit() {
        return (exchange, chain) -> {
            HttpMethod method = exchange.getRequest().getMethod();
            if (HttpMethod.GET.equals(method) || HttpMethod.HEAD.equals(method)) {
                return chain.filter(exchange);
            }
            String path = exchange.getRequest().getPath().value();
            return ReactiveSecurityContextHolder.getContext().map(SecurityContext::getAuthentication)
                    .map(a -> a.getName()).defaultIfEmpty("anonymous")
                    .flatMap(actor -> chain.filter(exchange).then(Mono.defer(() -> {
                        var status = exchange.getResponse().getStatusCode();
                        if (status != null && status.is2xxSuccessful()) {
                            return Blocking.run(() -> audit.record(actor, "api " + method.name(), path,
                                    "status " + status.value()));
                        }
                        return Mono.empty();
                    })));
        };
    }
}
