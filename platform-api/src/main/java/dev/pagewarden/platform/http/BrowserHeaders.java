package dev.pagewarden.platform.http;

import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.stereotype.Component;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import reactor.core.publisher.Mono;

import java.nio.charset.StandardCharsets;

/**
 * What a browser is told about every HTML page (admin UI, status page, error pages): a
 * Content-Security-Policy that allows only the UI's own stylesheet, script and images - the pages
 * have no inline script or style, so nothing else is needed - and no framing; the charset (UTF-8,
 * what Thymeleaf writes) on the content type. {@code nosniff} goes on every response.
 */
@Component
@Order(Ordered.HIGHEST_PRECEDENCE + 1)
class BrowserHeaders implements WebFilter {
    static final String POLICY = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
            + "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

    @Override
    public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
        ServerHttpResponse response = exchange.getResponse();
        response.beforeCommit(() -> {
            HttpHeaders headers = response.getHeaders();
            headers.set("X-Content-Type-Options", "nosniff");
            MediaType type = headers.getContentType();
            if (type != null && MediaType.TEXT_HTML.equalsTypeAndSubtype(type)) {
                if (type.getCharset() == null) {
                    headers.setContentType(new MediaType(type, StandardCharsets.UTF_8));
                }
                headers.set("Content-Security-Policy", POLICY);
            }
            return Mono.empty();
        });
        return chain.filter(exchange);
    }
}
