package dev.pagewarden.platform.http;

import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.stereotype.Component;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import reactor.core.publisher.Mono;

import java.util.concurrent.ThreadLocalRandom;
import java.util.regex.Pattern;

/**
 * Gives every HTTP exchange an id, returned as {@code X-Request-Id} on every response (errors
 * included) and written in every platform log line about the request. The id is always minted
 * here: a caller's {@code X-Request-Id} could copy another request's id and make logs and support
 * cases point at the wrong request, so it is only echoed back, as {@code X-Client-Request-Id} (when
 * it is a reasonable token), for the caller's own correlation.
 */
@Component
@Order(Ordered.HIGHEST_PRECEDENCE)
public class RequestIds implements WebFilter {
    public static final String HEADER = "X-Request-Id";
    public static final String CLIENT_HEADER = "X-Client-Request-Id";
    private static final String ATTRIBUTE = RequestIds.class.getName();
    private static final Pattern ACCEPTABLE = Pattern.compile("[A-Za-z0-9._:-]{8,128}");

    @Override
    public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
        String incoming = exchange.getRequest().getHeaders().getFirst(HEADER);
        String id = newId();
        exchange.getAttributes().put(ATTRIBUTE, id);
        exchange.getResponse().getHeaders().set(HEADER, id);
        if (incoming != null && ACCEPTABLE.matcher(incoming).matches()) {
            exchange.getResponse().getHeaders().set(CLIENT_HEADER, incoming);
        }
        return chain.filter(exchange);
    }

    public static String of(ServerWebExchange exchange) {
        Object id = exchange.getAttribute(ATTRIBUTE);
        return id == null ? "-" : id.toString();
    }

    /** Not a secret, so no SecureRandom: its entropy source reads a file, which would block the event loop. */
    private static String newId() {
        return "req_" + Long.toString(ThreadLocalRandom.current().nextLong() >>> 1, 36);
    }
}
