package dev.pagewarden.incident;

import org.springframework.security.authentication.ReactiveAuthenticationManager;
import org.springframework.security.config.web.server.ServerHttpSecurity;
import org.springframework.security.web.server.authorization.ServerAccessDeniedHandler;
import org.springframework.security.web.server.context.ServerSecurityContextRepository;
import org.springframework.security.web.server.csrf.ServerCsrfTokenRequestHandler;
import org.springframework.web.server.WebFilter;

/**
 * The admin UI's security pieces that the platform's filter chains put together: implemented by the
 * admin UI, used by the platform, so that neither compiles against the other.
 */
public interface AdminAccess {
    /** Taking a model private fails closed, so a responder may do it during an incident; making it public again is an admin's call. */
    String MODEL_TAKE_DOWN_ROLE = "RESPONDER";
    String MODEL_RESTORE_ROLE = "ADMIN";
    /** Attribute on a login POST the throttle refused: seconds until the next attempt is heard. */
    String LOGIN_THROTTLED = AdminAccess.class.getName() + ".loginThrottled";

    /** Checks admin users' passwords. */
    ReactiveAuthenticationManager loginManager();

    /** Where the UI and the admin API keep a login (the session), its user read again on every request. */
    ServerSecurityContextRepository sessionContexts();

    /** What a logged-in user refused by the role rules gets. */
    ServerAccessDeniedHandler accessDenied();

    /** Who may do what in the UI ({@code /admin/**}). */
    void uiRules(ServerHttpSecurity.AuthorizeExchangeSpec a);

    /** Who may do what on the admin API ({@code /admin/api/**}). */
    void apiRules(ServerHttpSecurity.AuthorizeExchangeSpec a);

    /** The CSRF token handler of the UI's forms and session callers of the admin API. */
    ServerCsrfTokenRequestHandler csrfHandler();

    /** Ends sessions after the admin idle timeout. */
    WebFilter sessionTimeout();
}
