package dev.pagewarden.adminui.web;

import dev.pagewarden.incident.PlatformPort;
import org.springframework.security.core.Authentication;
import org.springframework.security.core.GrantedAuthority;
import org.springframework.security.web.server.csrf.CsrfToken;
import org.springframework.web.bind.annotation.ControllerAdvice;
import org.springframework.web.bind.annotation.ModelAttribute;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;

import java.util.Set;
import java.util.stream.Collectors;

/**
 * Model attributes every admin page uses: the CSRF token (for forms and htmx headers), who is logged
 * in and what they may do (so pages show only the actions the role allows), and lab mode.
 */
@ControllerAdvice(basePackages = "dev.pagewarden.adminui")
class UiModelAdvice {
    private final PlatformPort platform;

    UiModelAdvice(PlatformPort platform) {
        this.platform = platform;
    }

    @ModelAttribute("_csrf")
    Mono<CsrfToken> csrf(ServerWebExchange exchange) {
        Mono<CsrfToken> token = exchange.getAttribute(CsrfToken.class.getName());
        return token == null ? Mono.empty() : token;
    }

    @ModelAttribute("me")
    Me me(Authentication auth) {
        return Me.of(auth);
    }

    @ModelAttribute("labEnabled")
    boolean labEnabled() {
        return platform.labEnabled();
    }

    @ModelAttribute("labInstalled")
    boolean labInstalled() {
        return platform.labInstalled();
    }

    /** The logged-in operator; {@code can('PUBLISHER')} in templates. */
    record Me(String name, Set<String> authorities) {
        /** Who {@code auth} is; nobody (no name, no roles) without one. */
        static Me of(Authentication auth) {
            if (auth == null) {
                return new Me(null, Set.of());
            }
            return new Me(auth.getName(), auth.getAuthorities().stream().map(GrantedAuthority::getAuthority)
                    .collect(Collectors.toSet()));
        }

        public boolean can(String role) {
            return authorities.contains("ROLE_" + role);
        }
    }
}
