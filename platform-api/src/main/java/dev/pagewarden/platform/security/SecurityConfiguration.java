package dev.pagewarden.platform.security;

import dev.pagewarden.incident.AdminAccess;
import dev.pagewarden.incident.audit.ApiCallAudit;
import dev.pagewarden.platform.error.ApiException;
import dev.pagewarden.platform.error.ErrorResponses;
import dev.pagewarden.platform.tenant.AuthUnavailableException;
import dev.pagewarden.platform.tenant.TenantService;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.annotation.Order;
import org.springframework.http.HttpHeaders;
import org.springframework.security.authentication.AuthenticationServiceException;
import org.springframework.security.authentication.BadCredentialsException;
import org.springframework.security.authentication.ReactiveAuthenticationManager;
import org.springframework.security.authentication.UsernamePasswordAuthenticationToken;
import org.springframework.security.config.annotation.web.reactive.EnableWebFluxSecurity;
import org.springframework.security.config.web.server.SecurityWebFiltersOrder;
import org.springframework.security.config.web.server.ServerHttpSecurity;
import org.springframework.security.core.Authentication;
import org.springframework.security.core.authority.AuthorityUtils;
import org.springframework.security.web.server.SecurityWebFilterChain;
import org.springframework.security.web.server.authentication.AuthenticationWebFilter;
import org.springframework.security.web.server.authentication.ServerAuthenticationConverter;
import org.springframework.security.web.server.context.NoOpServerSecurityContextRepository;
import org.springframework.security.web.server.authentication.RedirectServerAuthenticationSuccessHandler;
import org.springframework.security.web.server.authentication.logout.DelegatingServerLogoutHandler;
import org.springframework.security.web.server.authentication.logout.RedirectServerLogoutSuccessHandler;
import org.springframework.security.web.server.authentication.logout.SecurityContextServerLogoutHandler;
import org.springframework.security.web.server.authentication.logout.WebSessionServerLogoutHandler;
import org.springframework.security.web.server.util.matcher.ServerWebExchangeMatcher;
import org.springframework.security.web.server.util.matcher.ServerWebExchangeMatchers;
import reactor.core.publisher.Mono;

/**
 * Two stateless API chains: {@code /v1/**} for tenants (API key as bearer token) and
 * {@code /admin/api/**} for operators (the admin token, every admin role). Failures answer with
 * the OpenAI error body. {@code /admin/api/**} also accepts a logged-in admin UI session (CSRF then
 * required). The admin UI ({@code /admin/**}) has a session chain with form login; everything else
 * (health, metrics, {@code /status}) is public.
 */
@Configuration(proxyBeanMethods = false)
@EnableWebFluxSecurity
class SecurityConfiguration {
    static final String[] ADMIN_ROLES = {"ROLE_VIEWER", "ROLE_RESPONDER", "ROLE_PUBLISHER", "ROLE_ADMIN"};

    /**
     * The management port: probes (liveness, readiness, plain health status) are open; health details,
     * metrics and the rest need the admin token or the scrape token ({@code pagewarden.metrics-token}).
     */
    @Bean
    @Order(0)
    SecurityWebFilterChain management(ServerHttpSecurity http, AdminToken admin, MetricsToken scrape,
                                      ManagementPort port, ErrorResponses errors) {
        ReactiveAuthenticationManager manager = auth -> {
            String key = ((PresentedKey) auth).key();
            if (admin.matches(key) || scrape.matches(key)) {
                return Mono.just(new UsernamePasswordAuthenticationToken(admin.matches(key) ? "admin-token" : "metrics-token",
                        "", AuthorityUtils.createAuthorityList("ROLE_METRICS")));
            }
            return Mono.error(new BadCredentialsException("bad metrics token"));
        };
        return apiChain(http, "/**", manager, errors,
                "Missing credentials: send 'Authorization: Bearer <PAGEWARDEN_METRICS_TOKEN or PAGEWARDEN_ADMIN_TOKEN>'",
                "Incorrect metrics or admin token")
                .securityMatcher(exchange -> port.serves(exchange)
                        ? ServerWebExchangeMatcher.MatchResult.match() : ServerWebExchangeMatcher.MatchResult.notMatch())
                .authorizeExchange(a -> a.pathMatchers("/actuator/health", "/actuator/health/liveness",
                                "/actuator/health/readiness").permitAll()
                        .anyExchange().hasRole("METRICS"))
                .build();
    }

    @Bean
    @Order(1)
    SecurityWebFilterChain tenantApi(ServerHttpSecurity http, TenantService tenants, ErrorResponses errors) {
        // cached keys answer on the spot; lookups run off the event loop inside TenantService
        ReactiveAuthenticationManager manager = auth -> tenants.authenticate(((PresentedKey) auth).key())
                .onErrorMap(AuthUnavailableException.class, e -> new AuthenticationServiceException(e.getMessage(), e))
                .flatMap(p -> p.<Mono<Authentication>>map(principal -> Mono.just(new TenantAuthentication(principal)))
                        .orElseGet(() -> Mono.error(new BadCredentialsException("Incorrect API key provided"))));
        return apiChain(http, "/v1/**", manager, errors,
                "Missing API key: send it as 'Authorization: Bearer <key>'",
                "Incorrect API key provided, or the key has been revoked")
                .authorizeExchange(a -> a.anyExchange().hasRole("TENANT"))
                .build();
    }

    @Bean
    @Order(2)
    SecurityWebFilterChain adminApi(ServerHttpSecurity http, AdminToken token, ErrorResponses errors, AdminAccess ui,
                                    ApiCallAudit calls, AuthGuard guard) {
        // wrong tokens are throttled per client address (429 too_many_attempts)
        ReactiveAuthenticationManager manager = guard.adminToken(auth -> token.matches(((PresentedKey) auth).key())
                ? Mono.just(new UsernamePasswordAuthenticationToken("admin-token", "",
                AuthorityUtils.createAuthorityList(ADMIN_ROLES)))
                : Mono.error(new BadCredentialsException("bad admin token")));
        return apiChain(http, "/admin/api/**", manager, errors,
                "Missing admin credentials: send 'Authorization: Bearer <PAGEWARDEN_ADMIN_TOKEN>'",
                "Incorrect admin token")
                // a logged-in admin UI session works too (its user's roles as of this request, CSRF-protected);
                // the bearer token wins
                .securityContextRepository(ui.sessionContexts())
                .csrf(c -> c.requireCsrfProtectionMatcher(AdminApiCsrf::required).csrfTokenRequestHandler(ui.csrfHandler()))
                .authorizeExchange(ui::apiRules)
                // outermost, so that refusals by the filters below (401, 403, CSRF) are recorded too
                .addFilterAt(calls.recorder(), SecurityWebFiltersOrder.FIRST)
                .addFilterAfter(calls.actor(), SecurityWebFiltersOrder.AUTHENTICATION)
                .addFilterBefore(guard.clientAddress(), SecurityWebFiltersOrder.AUTHENTICATION)
                .build();
    }

    /**
     * The admin UI: form login against admin users in PostgreSQL (throttled per account and address:
     * 429 and the form saying so), session with idle timeout, CSRF, roles.
     */
    @Bean
    @Order(3)
    SecurityWebFilterChain adminUi(ServerHttpSecurity http, AdminAccess ui, AuthGuard guard) {
        return http.securityMatcher(ServerWebExchangeMatchers.pathMatchers("/admin", "/admin/**"))
                .authenticationManager(guard.login(ui.loginManager()))
                // each request re-reads the user: disabled, demoted or password changed applies at once everywhere
                .securityContextRepository(ui.sessionContexts())
                .exceptionHandling(e -> e.accessDeniedHandler(ui.accessDenied()))
                .csrf(c -> c.csrfTokenRequestHandler(ui.csrfHandler()))
                .httpBasic(ServerHttpSecurity.HttpBasicSpec::disable)
                .formLogin(f -> f.loginPage("/admin/login")
                        .authenticationSuccessHandler(new RedirectServerAuthenticationSuccessHandler("/admin"))
                        .authenticationFailureHandler(guard.loginFailure()))
                // logging out deletes the session (its row in PostgreSQL), not just the login in it
                .logout(l -> l.logoutUrl("/admin/logout")
                        .logoutHandler(new DelegatingServerLogoutHandler(new SecurityContextServerLogoutHandler(),
                                new WebSessionServerLogoutHandler()))
                        .logoutSuccessHandler(new RedirectServerLogoutSuccessHandler() {{
                            setLogoutSuccessUrl(java.net.URI.create("/admin/login?logout"));
                        }}))
                .addFilterAt(ui.sessionTimeout(), SecurityWebFiltersOrder.FIRST)
                .addFilterBefore(guard.clientAddress(), SecurityWebFiltersOrder.FORM_LOGIN)
                .authorizeExchange(ui::uiRules)
                .build();
    }

    @Bean
    @Order(10)
    SecurityWebFilterChain everythingElse(ServerHttpSecurity http) {
        return http.csrf(ServerHttpSecurity.CsrfSpec::disable)
                .httpBasic(ServerHttpSecurity.HttpBasicSpec::disable)
                .formLogin(ServerHttpSecurity.FormLoginSpec::disable)
                .authorizeExchange(a -> a.anyExchange().permitAll())
                .build();
    }

    private static ServerHttpSecurity apiChain(ServerHttpSecurity http, String pattern, ReactiveAuthenticationManager manager,
                                               ErrorResponses errors, String missing, String wrong) {
        AuthenticationWebFilter filter = new AuthenticationWebFilter(manager);
        filter.setServerAuthenticationConverter(bearer());
        filter.setSecurityContextRepository(NoOpServerSecurityContextRepository.getInstance());
        filter.setAuthenticationFailureHandler((exchange, ex) -> errors.write(exchange.getExchange(),
                ex instanceof TooManyAttemptsException t ? ApiException.tooManyAttempts(t.getMessage(), t.retryAfter())
                        : ex.getCause() instanceof AuthUnavailableException down // credentials not checkable now: 503, not 401
                        ? ApiException.unavailable("auth_unavailable", down.getMessage(), down.retryAfter())
                        : ApiException.unauthorized(wrong)));
        return http.securityMatcher(ServerWebExchangeMatchers.pathMatchers(pattern))
                .csrf(ServerHttpSecurity.CsrfSpec::disable)
                .httpBasic(ServerHttpSecurity.HttpBasicSpec::disable)
                .formLogin(ServerHttpSecurity.FormLoginSpec::disable)
                .logout(ServerHttpSecurity.LogoutSpec::disable)
                .requestCache(ServerHttpSecurity.RequestCacheSpec::disable)
                .securityContextRepository(NoOpServerSecurityContextRepository.getInstance())
                .addFilterAt(filter, SecurityWebFiltersOrder.AUTHENTICATION)
                .exceptionHandling(e -> e
                        .authenticationEntryPoint((exchange, ex) -> errors.write(exchange, ApiException.unauthorized(missing)))
                        .accessDeniedHandler((exchange, ex) -> errors.write(exchange,
                                ApiException.forbidden("this credential may not do that"))));
    }

    /** CSRF matters only for cookie (session) callers of the admin API: bearer calls cannot be forged by a page. */
    private static final class AdminApiCsrf {
        static reactor.core.publisher.Mono<ServerWebExchangeMatcher.MatchResult> required(
                org.springframework.web.server.ServerWebExchange exchange) {
            var req = exchange.getRequest();
            boolean safe = org.springframework.http.HttpMethod.GET.equals(req.getMethod())
                    || org.springframework.http.HttpMethod.HEAD.equals(req.getMethod())
                    || org.springframework.http.HttpMethod.OPTIONS.equals(req.getMethod());
            boolean bearer = req.getHeaders().containsHeader(HttpHeaders.AUTHORIZATION);
            return safe || bearer ? ServerWebExchangeMatcher.MatchResult.notMatch() : ServerWebExchangeMatcher.MatchResult.match();
        }
    }

    /** {@code Authorization: Bearer <token>}; no header: no authentication (the entry point answers 401). */
    private static ServerAuthenticationConverter bearer() {
        return exchange -> {
            String header = exchange.getRequest().getHeaders().getFirst(HttpHeaders.AUTHORIZATION);
            if (header == null) {
                return Mono.empty();
            }
            if (!header.regionMatches(true, 0, "Bearer ", 0, 7)) {
                return Mono.just(new PresentedKey(""));
            }
            return Mono.just(new PresentedKey(header.substring(7).strip()));
        };
    }
}
