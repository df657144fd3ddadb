package dev.pagewarden.platform.error;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.stereotype.Component;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;
import tools.jackson.databind.json.JsonMapper;

/** Writes an {@link ApiException} as status + OpenAI error body (+ Retry-After), from filters and handlers alike. */
@Component
public class ErrorResponses {
    private final JsonMapper json;

    public ErrorResponses(JsonMapper json) {
        this.json = json;
    }

    public Mono<Void> write(ServerWebExchange exchange, ApiException e) {
        ServerHttpResponse response = exchange.getResponse();
        if (response.isCommitted()) {
            return Mono.empty();
        }
        response.setStatusCode(e.status());
        response.getHeaders().setContentType(MediaType.APPLICATION_JSON);
        if (e.retryAfter() != null) {
            response.getHeaders().set(HttpHeaders.RETRY_AFTER, e.retryAfterSeconds());
        }
        byte[] bytes = json.writeValueAsBytes(e.error().body());
        DataBuffer buffer = response.bufferFactory().wrap(bytes);
        return response.writeWith(Mono.just(buffer));
    }
}
