package dev.pagewarden.adminui.web;

import dev.pagewarden.incident.PlatformPort;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.InvalidMediaTypeException;
import org.springframework.http.MediaType;
import org.springframework.security.core.Authentication;
import org.springframework.security.web.server.csrf.CsrfToken;
import org.springframework.stereotype.Component;
import org.springframework.web.reactive.result.view.ViewResolver;
import org.springframework.web.server.ResponseStatusException;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import reactor.core.publisher.Mono;

import java.util.HashMap;
import java.util.Locale;
import java.util.Map;

/**
 * The admin error page, with the navigation, for what a browser meets outside any page's own handling: an
 * unknown admin URL or a wrong method (refusals Spring raises before a page runs), and an action the role
 * refuses (from {@link AdminSecurity#accessDenied}). Only for browsers on admin pages (Accept names text/html);
 * the admin API and other clients keep their JSON error bodies. Runs inside the security chain, so the page
 * knows who is logged in.
 */
@Component
@Order(Ordered.LOWEST_PRECEDENCE)
class UiErrorPages implements WebFilter {
    private final ObjectProvider<ViewResolver> views;
    private final PlatformPort platform;

    /** The view resolvers are looked up when a page is rendered: the security configuration builds this early. */
    UiErrorPages(ObjectProvider<ViewResolver> views, PlatformPort platform) {
        this.views = views;
        this.platform = platform;
    }

    @Override
    public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
        if (!forBrowserOnAdminPage(exchange)) {
            return chain.filter(exchange);
        }
        return chain.filter(exchange).onErrorResume(
                e -> e instanceof ResponseStatusException r && r.getStatusCode().is4xxClientError()
                        && !exchange.getResponse().isCommitted(),
                e -> {
                    ResponseStatusException r = (ResponseStatusException) e;
                    return render(exchange, r.getStatusCode(), r.getStatusCode().value() == 404
                            ? "There is no page at " + exchange.getRequest().getPath().value() + "."
                            : r.getReason() == null ? r.getStatusCode().toString() : r.getReason());
                });
    }

    /** An admin page (not the admin API) asked for by a browser: the client named HTML among what it accepts. */
    static boolean forBrowserOnAdminPage(ServerWebExchange exchange) {
        String path = exchange.getRequest().getPath().value();
        if (!(path.equals("/admin") || path.startsWith("/admin/")) || path.startsWith("/admin/api")) {
            return false;
        }
        try {
            return exchange.getRequest().getHeaders().getAccept().stream()
                    .anyMatch(t -> t.getType().equals("text") && t.getSubtype().equals("html"));
        } catch (InvalidMediaTypeException e) {
            return false;
        }
    }

    /** Writes the error page with {@code status}, its title the status's reason phrase, its text {@code message}. */
    Mono<Void> render(ServerWebExchange exchange, HttpStatusCode status, String message) {
        exchange.getResponse().setStatusCode(status);
        HttpStatus known = HttpStatus.resolve(status.value());
        Map<String, Object> model = new HashMap<>();
        model.put("title", known == null ? "Error " + status.value() : known.getReasonPhrase());
        model.put("error", message);
        model.put("labEnabled", platform.labEnabled());
        model.put("labInstalled", platform.labInstalled());
        Mono<CsrfToken> csrf = exchange.getAttribute(CsrfToken.class.getName());
        return (csrf == null ? Mono.<CsrfToken>empty() : csrf).doOnNext(t -> model.put("_csrf", t))
                .then(exchange.getPrincipal())
                .doOnNext(p -> model.put("me", p instanceof Authentication a ? UiModelAdvice.Me.of(a) : UiModelAdvice.Me.of(null)))
                .then(Mono.defer(() -> {
                    model.putIfAbsent("me", UiModelAdvice.Me.of(null));
                    return resolve().flatMap(v -> v.render(model, MediaType.TEXT_HTML, exchange));
                }));
    }

    private Mono<org.springframework.web.reactive.result.view.View> resolve() {
        return reactor.core.publisher.Flux.fromStream(views.orderedStream())
                .concatMap(r -> r.resolveViewName("admin/error", Locale.ENGLISH)).next()
                .switchIfEmpty(Mono.error(() -> new IllegalStateException("no view for admin/error")));
    }
}
