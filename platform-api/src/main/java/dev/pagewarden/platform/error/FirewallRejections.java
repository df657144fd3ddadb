package dev.pagewarden.platform.error;

import org.springframework.security.web.server.firewall.ServerExchangeRejectedException;
import org.springframework.security.web.server.firewall.ServerExchangeRejectedHandler;
import org.springframework.stereotype.Component;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;

/**
 * Requests Spring Security's firewall refuses before any chain ({@code //}, {@code %2e},
 * {@code ;}, encoded slashes, ...) answer 400 with the OpenAI error body instead of an empty one.
 * Picked up by {@code @EnableWebFluxSecurity} as the single {@link ServerExchangeRejectedHandler}.
 */
@Component
class FirewallRejections implements ServerExchangeRejectedHandler {
    private final ErrorResponses responses;

    FirewallRejections(ErrorResponses responses) {
        this.responses = responses;
    }

    @Override
    public Mono<Void> handle(ServerWebExchange exchange, ServerExchangeRejectedException ex) {
        // the firewall's reason quotes the raw path back; say what is wrong without echoing it
        return responses.write(exchange, ApiException.invalid(null, "invalid_path", "the request path or method is "
                + "not allowed (empty segments '//', dot segments, ';', encoded '/', '\\' or '%' and control "
                + "characters are refused); send a normalized path"));
    }
}
