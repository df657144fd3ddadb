package dev.pagewarden.platform.tenant;

import org.springframework.core.annotation.Order;
import org.springframework.http.HttpHeaders;
import org.springframework.security.core.Authentication;
import org.springframework.stereotype.Component;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import reactor.core.publisher.Mono;

import java.time.Duration;

/**
 * OpenAI's rate-limit headers on every answer to an authenticated tenant (success, stream, error, 429 alike):
 * {@code x-ratelimit-limit-requests}, {@code -remaining-requests}, {@code -reset-requests} and the same three for
 * tokens, as {@link Quotas#rateLimits} knows them when the answer is committed - so a non-streamed answer already
 * counts its own request, with its unused tokens given back. Limit and remaining are integers, reset the time until
 * the bucket is full again in OpenAI's form ({@code 120ms}, {@code 1s}, {@code 8.64s}, {@code 1m0s}). A limit the
 * tenant does not have (unlimited) sends none of its three headers.
 */
@Component
@Order(0) // after Spring Security's chains (-100): the caller is known here
class RateLimitHeaders implements WebFilter {
    private final Quotas quotas;

    RateLimitHeaders(Quotas quotas) {
        this.quotas = quotas;
    }

    @Override
    public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
        if (!exchange.getRequest().getPath().value().startsWith("/v1/")) {
            return chain.filter(exchange); // only the tenant API has tenants (and other chains' callers load lazily)
        }
        return exchange.getPrincipal()
                .filter(p -> p instanceof Authentication a && a.getPrincipal() instanceof TenantPrincipal)
                .map(p -> (TenantPrincipal) ((Authentication) p).getPrincipal())
                .doOnNext(caller -> exchange.getResponse().beforeCommit(() -> {
                    write(exchange.getResponse().getHeaders(), quotas.rateLimits(caller));
                    return Mono.empty();
                }))
                .then(Mono.defer(() -> chain.filter(exchange)));
    }

    static void write(HttpHeaders headers, Quotas.RateLimits limits) {
        write(headers, "requests", limits.requests());
        write(headers, "tokens", limits.tokens());
    }

    private static void write(HttpHeaders headers, String dimension, Quotas.RateWindow window) {
        if (window == null) {
            return;
        }
        headers.set("x-ratelimit-limit-" + dimension, Long.toString(window.limit()));
        headers.set("x-ratelimit-remaining-" + dimension, Long.toString(window.remaining()));
        headers.set("x-ratelimit-reset-" + dimension, duration(window.reset()));
    }

    /**
     * A duration as OpenAI writes it (Go's form, to the millisecond, rounded up): {@code 0s}, {@code 120ms},
     * {@code 1s}, {@code 8.64s}, {@code 6m0s}, {@code 1h2m3s}.
     */
    static String duration(Duration d) {
        long ms = Math.max(0, (d.toNanos() + 999_999) / 1_000_000);
        if (ms == 0) {
            return "0s";
        }
        if (ms < 1000) {
            return ms + "ms";
        }
        long seconds = ms / 1000;
        StringBuilder out = new StringBuilder();
        long h = seconds / 3600;
        long m = seconds % 3600 / 60;
        if (h > 0) {
            out.append(h).append('h');
        }
        if (h > 0 || m > 0) {
            out.append(m).append('m');
        }
        out.append(seconds % 60);
        long fraction = ms % 1000;
        if (fraction > 0) {
            String digits = String.format("%03d", fraction);
            out.append('.').append(digits.replaceAll("0+$", ""));
        }
        return out.append('s').toString();
    }
}
