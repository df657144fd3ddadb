package dev.pagewarden.adminui.web;

import dev.pagewarden.adminui.AdminUiProperties;
import dev.pagewarden.adminui.Blocking;
import dev.pagewarden.adminui.users.AdminLogin;
import dev.pagewarden.adminui.users.AdminUserService;
import org.springframework.http.HttpMethod;
import org.springframework.security.authentication.ReactiveAuthenticationManager;
import org.springframework.security.config.web.server.ServerHttpSecurity;
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
 * timeout. ({@code /admin/api} calls are recorded by {@link dev.pagewarden.adminui.audit.ApiCallAudit}.)
 */
@Component
public class AdminSecurity {
    /** Taking a model private fails closed, so a responder may do it during an incident; making it public again is an admin's call. */
    public static final String MODEL_TAKE_DOWN_ROLE = "RESPONDER";
    public static final String MODEL_RESTORE_ROLE = "ADMIN";
    private final AdminLogin login;
    private final AdminUiProperties properties;
    private final XorServerCsrfTokenRequestAttributeHandler csrf = new XorServerCsrfTokenRequestAttributeHandler();

    AdminSecurity(AdminUserService users, AdminUiProperties properties) {
        this.login = new AdminLogin(users, users.passwordEncoder());
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
     * lab, placing a legal hold) responder; publishing a disclosure publisher; users, tenants and releasing a
     * legal hold admin.
     */
    public static void uiRules(ServerHttpSecurity.AuthorizeExchangeSpec a) {
        a.pathMatchers("/admin/login", "/admin/assets/**").permitAll()
                .pathMatchers(HttpMethod.POST, "/admin/users/**", "/admin/tenants/**").hasRole("ADMIN")
                .pathMatchers(HttpMethod.POST, "/admin/disclosures/*/publish").hasRole("PUBLISHER")
                .pathMatchers(HttpMethod.POST, "/admin/incidents/*/model-public").hasRole(MODEL_RESTORE_ROLE)
                // releasing a legal hold lets evidence be dropped: an admin's call (placing one, a responder's)
                .pathMatchers(HttpMethod.POST, "/admin/holds/*/release").hasRole("ADMIN")
                .pathMatchers(HttpMethod.POST, "/admin/**").hasRole("RESPONDER")
                .pathMatchers("/admin/users", "/admin/users/**").hasRole("ADMIN")
                .anyExchange().hasRole("VIEWER");
    }

    /**
     * The same for {@code /admin/api}: lab replay, taking a model private and the disclosure workflow
     * follow the UI's roles; other writes stay admin-only.
     */
    public static void apiRules(ServerHttpSecurity.AuthorizeExchangeSpec a) {
        a.pathMatchers(HttpMethod.GET, "/admin/api/**").hasRole("VIEWER")
                .pathMatchers(HttpMethod.POST, "/admin/api/lab/**").hasRole("RESPONDER")
                // the disclosure workflow as in the UI: responders draft and review, publishers publish
                .pathMatchers(HttpMethod.POST, "/admin/api/disclosures/*/publish").hasRole("PUBLISHER")
                .pathMatchers(HttpMethod.POST, "/admin/api/incidents/*/disclosure", "/admin/api/disclosures/*/approve")
                .hasRole("RESPONDER")
                .pathMatchers(HttpMethod.PUT, "/admin/api/disclosures/*").hasRole("RESPONDER")
                // the body says which way; restoring needs MODEL_RESTORE_ROLE, checked where the body is read
                .pathMatchers(HttpMethod.PUT, "/admin/api/models/*/visibility").hasRole(MODEL_TAKE_DOWN_ROLE)
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
}
