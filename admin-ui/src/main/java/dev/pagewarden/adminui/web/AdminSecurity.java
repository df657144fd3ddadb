package dev.pagewarden.adminui.web;

import dev.pagewarden.adminui.users.AdminLogin;
import dev.pagewarden.adminui.users.AdminUserService;
import dev.pagewarden.adminui.users.SessionAuthorization;
import dev.pagewarden.incident.AdminAccess;
import dev.pagewarden.incident.AdminProperties;
import dev.pagewarden.incident.Blocking;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatus;
import org.springframework.security.authentication.ReactiveAuthenticationManager;
import org.springframework.security.config.web.server.ServerHttpSecurity;
import org.springframework.security.core.Authentication;
import org.springframework.security.web.server.DefaultServerRedirectStrategy;
import org.springframework.security.web.server.authorization.HttpStatusServerAccessDeniedHandler;
import org.springframework.security.web.server.authorization.ServerAccessDeniedHandler;
import org.springframework.security.web.server.csrf.ServerCsrfTokenRequestHandler;
import org.springframework.security.web.server.csrf.XorServerCsrfTokenRequestAttributeHandler;
import org.springframework.stereotype.Component;
import org.springframework.web.server.WebFilter;
import reactor.core.publisher.Mono;

import java.net.URI;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;

/**
 * The admin UI's security pieces, used by the platform's security configuration: the login
 * authentication manager (admin users in PostgreSQL), the session's login authorized again on each
 * request, the URL rules by role, the session idle timeout. ({@code /admin/api} calls are recorded by
 * {@link dev.pagewarden.incident.audit.ApiCallAudit}.)
 */
@Component
public class AdminSecurity implements AdminAccess {
    /** One's own password page, open to every logged-in user (also one that must change the password). */
    public static final String PASSWORD_PAGE = "/admin/password";
    private final AdminLogin login;
    private final SessionAuthorization sessions;
    private final AdminProperties properties;
    private final UiErrorPages errorPages;
    private final XorServerCsrfTokenRequestAttributeHandler csrf = new XorServerCsrfTokenRequestAttributeHandler();

    AdminSecurity(AdminUserService users, AdminProperties properties, UiErrorPages errorPages) {
        this.login = new AdminLogin(users, users.passwordEncoder());
        this.sessions = new SessionAuthorization(users, AdminSessionConfiguration.CALL_TIMEOUT);
        this.properties = properties;
        this.errorPages = errorPages;
        try {
            SecureRandom random = SecureRandom.getInstance("DRBG");
            random.nextBytes(new byte[16]); // seeds now, never on a request thread
            csrf.setSecureRandom(random);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("no DRBG SecureRandom in this JDK", e);
        }
    }

    /** Checks admin users' passwords in constant work per attempt (see {@link AdminLogin}); one instance, built at start. */
    @Override
    public ReactiveAuthenticationManager loginManager() {
        return login;
    }

    /**
     * Where the UI and the admin API keep a login: the session, its user's role, enabled flag and session
     * epoch read again on every request (see {@link SessionAuthorization}).
     */
    @Override
    public SessionAuthorization sessionContexts() {
        return sessions;
    }

    /**
     * A logged-in user refused by the role rules: sent to the password page while their password must be
     * changed (nothing else is open to them), else 403 (a browser on an admin page gets the error page).
     */
    @Override
    public ServerAccessDeniedHandler accessDenied() {
        ServerAccessDeniedHandler forbidden = new HttpStatusServerAccessDeniedHandler(HttpStatus.FORBIDDEN);
        DefaultServerRedirectStrategy redirect = new DefaultServerRedirectStrategy();
        return (exchange, denied) -> exchange.getPrincipal()
                .map(p -> p instanceof Authentication a && SessionAuthorization.mustChangePassword(a))
                .defaultIfEmpty(false)
                .flatMap(mustChange -> mustChange ? redirect.sendRedirect(exchange, URI.create(PASSWORD_PAGE))
                        : UiErrorPages.forBrowserOnAdminPage(exchange)
                        ? errorPages.render(exchange, HttpStatus.FORBIDDEN, "Your role does not allow this.")
                        : forbidden.handle(exchange, denied));
    }

    /**
     * Who may do what in the UI: reading needs viewer; acting (incident workflow, take-down, drafts,
     * lab, placing a legal hold) responder; publishing a disclosure publisher; users, tenants and releasing a
     * legal hold admin. One's own password page: any logged-in user, the only page open to one whose
     * password must be changed.
     */
    @Override
    public void uiRules(ServerHttpSecurity.AuthorizeExchangeSpec a) {
        a.pathMatchers("/admin/login", "/admin/assets/**").permitAll()
                .pathMatchers(PASSWORD_PAGE).authenticated()
                .pathMatchers(HttpMethod.POST, "/admin/users/**", "/admin/tenants/**").hasRole("ADMIN")
                .pathMatchers(HttpMethod.POST, "/admin/disclosures/*/publish").hasRole("PUBLISHER")
                .pathMatchers(HttpMethod.GET, "/admin/disclosures/*/publish").hasRole("PUBLISHER") // its confirmation
                // a status update is public the moment it is posted, like a published disclosure
                .pathMatchers(HttpMethod.POST, "/admin/disclosures/*/status-update").hasRole("PUBLISHER")
                .pathMatchers(HttpMethod.POST, "/admin/incidents/*/model-public").hasRole(MODEL_RESTORE_ROLE)
                // releasing a legal hold lets evidence be dropped: an admin's call (placing one, a responder's)
                .pathMatchers(HttpMethod.POST, "/admin/holds/*/release").hasRole("ADMIN")
                // merging closes an incident into another: an admin's call
                .pathMatchers(HttpMethod.POST, "/admin/incidents/*/merge").hasRole("ADMIN")
                .pathMatchers(HttpMethod.POST, "/admin/**").hasRole("RESPONDER")
                .pathMatchers(HttpMethod.GET, "/admin/incidents/*/confirm/*").hasRole("RESPONDER") // a step's confirmation
                .pathMatchers("/admin/users", "/admin/users/**").hasRole("ADMIN")
                .anyExchange().hasRole("VIEWER");
    }

    /**
     * The same for {@code /admin/api}: lab replay, taking a model private and the disclosure workflow
     * follow the UI's roles; other writes stay admin-only.
     */
    @Override
    public void apiRules(ServerHttpSecurity.AuthorizeExchangeSpec a) {
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
    @Override
    public ServerCsrfTokenRequestHandler csrfHandler() {
        return csrf;
    }

    /** Sessions end after {@code pagewarden.admin.session-timeout} without a request. */
    @Override
    public WebFilter sessionTimeout() {
        return (exchange, chain) -> exchange.getSession()
                .doOnNext(s -> s.setMaxIdleTime(properties.sessionTimeout()))
                .then(chain.filter(exchange));
    }
}
