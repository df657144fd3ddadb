package dev.pagewarden.incident.audit;

import dev.pagewarden.incident.Blocking;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatusCode;
import org.springframework.security.core.context.ReactiveSecurityContextHolder;
import org.springframework.security.core.context.SecurityContext;
import org.springframework.stereotype.Component;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import reactor.core.publisher.Mono;

import java.time.Clock;
import java.time.Duration;

/**
 * Records {@code /admin/api} calls in the admin audit: every state-changing call that succeeded,
 * and every call that failed (4xx/5xx) - refusals by security (401, 403, CSRF) included, which
 * never reach a controller. The row is written when the response commits, so it holds the status
 * the caller got, whoever answered. Unauthenticated refusals are capped per minute (the rest are
 * counted and summed up in the next row) so that a flood cannot grow the table without bound.
 */
@Component
public class ApiCallAudit {
    private static final Logger LOG = LoggerFactory.getLogger(ApiCallAudit.class);
    /** Unauthenticated refusals recorded one by one per minute; the rest are counted into the next row. */
    public static final int ANONYMOUS_PER_MINUTE = 60;
    private static final int MAX_TARGET = 256;
    private static final Duration WRITE_WAIT = Duration.ofSeconds(3);
    private static final String ACTOR = ApiCallAudit.class.getName() + ".actor";

    private final AdminAuditLog audit;
    private final RefusalBudget anonymous;

    ApiCallAudit(AdminAuditLog audit, Clock clock) {
        this.audit = audit;
        this.anonymous = new RefusalBudget(ANONYMOUS_PER_MINUTE, clock);
    }

    /** Outermost filter of the admin API chain: records the call as its response commits. */
    public WebFilter recorder() {
        return (exchange, chain) -> {
            exchange.getResponse().beforeCommit(() -> record(exchange));
            return chain.filter(exchange);
        };
    }

    /** After authentication: remembers who the caller is, for the row (absent: unauthenticated). */
    public WebFilter actor() {
        return (exchange, chain) -> ReactiveSecurityContextHolder.getContext().map(SecurityContext::getAuthentication)
                .doOnNext(a -> exchange.getAttributes().put(ACTOR, a.getName()))
                .then(Mono.defer(() -> chain.filter(exchange)));
    }

    private Mono<Void> record(ServerWebExchange exchange) {
        HttpMethod method = exchange.getRequest().getMethod();
        HttpStatusCode status = exchange.getResponse().getStatusCode();
        int code = status == null ? 200 : status.value();
        boolean read = HttpMethod.GET.equals(method) || HttpMethod.HEAD.equals(method);
        boolean failed = code >= 400;
        if (!failed && (read || code >= 300)) {
            return Mono.empty();
        }
        String actor = exchange.getAttribute(ACTOR);
        String details = "status " + code + (failed ? " (refused)" : "");
        if (actor == null) {
            int before = anonymous.admit();
            if (before < 0) {
                return Mono.empty();
            }
            actor = "anonymous";
            if (before > 0) {
                details += "; " + before + " earlier unauthenticated refusal(s) over the per-minute budget were not recorded one by one";
            }
        }
        String path = exchange.getRequest().getPath().value();
        String target = path.length() <= MAX_TARGET ? path : path.substring(0, MAX_TARGET) + "...";
        String who = actor;
        String what = details;
        return Blocking.run(() -> audit.record(who, "api " + method.name(), target, what))
                .timeout(WRITE_WAIT)
                .onErrorResume(e -> {
                    LOG.warn("admin audit row for {} {} ({}) not written: {}", method, target, what, e.toString());
                    return Mono.empty();
                });
    }
}
