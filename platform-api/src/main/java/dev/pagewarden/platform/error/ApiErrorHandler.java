package dev.pagewarden.platform.error;

import dev.pagewarden.adminui.input.InvalidTextException;
import dev.pagewarden.platform.database.DatabaseErrors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.core.annotation.Order;
import org.springframework.http.HttpStatus;
import org.springframework.stereotype.Component;
import org.springframework.web.server.MethodNotAllowedException;
import org.springframework.web.server.ResponseStatusException;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.ServerWebInputException;
import org.springframework.web.server.UnsupportedMediaTypeStatusException;
import org.springframework.web.server.WebExceptionHandler;
import reactor.core.publisher.Mono;
import tools.jackson.core.JacksonException;

/**
 * Every failure on the tenant API ({@code /v1}) and the admin API ({@code /admin/api}) leaves as an
 * OpenAI-shaped error body with the right status - unknown paths and wrong methods included - and
 * so do unknown paths and wrong methods anywhere else. Runs before Spring Boot's default handler,
 * which keeps the admin UI's pages (an HTML error page for browsers) and other failures of non-API
 * pages.
 */
@Component
@Order(-2)
class ApiErrorHandler implements WebExceptionHandler {
    private static final Logger LOG = LoggerFactory.getLogger(ApiErrorHandler.class);

    private final ErrorResponses responses;

    ApiErrorHandler(ErrorResponses responses) {
        this.responses = responses;
    }

    @Override
    public Mono<Void> handle(ServerWebExchange exchange, Throwable ex) {
        String path = exchange.getRequest().getPath().value();
        boolean api = path.startsWith("/v1") || path.startsWith("/admin/api");
        boolean adminUi = !api && (path.equals("/admin") || path.startsWith("/admin/"));
        boolean routing = ex instanceof ResponseStatusException rs
                && (rs.getStatusCode().value() == 404 || rs.getStatusCode().value() == 405);
        if (!api && (adminUi || !routing)) {
            return Mono.error(ex);
        }
        return responses.write(exchange, toApi(exchange, ex));
    }

    static ApiException toApi(ServerWebExchange exchange, Throwable ex) {
        return switch (ex) {
            case ApiException api -> api;
            case InvalidTextException text -> ApiException.invalid(text.field(), text.getMessage());
            case IllegalArgumentException iae -> ApiException.invalid(null, iae.getMessage());
            case UnsupportedMediaTypeStatusException u -> ApiException.invalid(null, "unsupported content type "
                    + u.getContentType() + "; send application/json");
            case MethodNotAllowedException m -> ApiException.methodNotAllowed(m.getHttpMethod() + " is not allowed on "
                    + exchange.getRequest().getPath().value() + "; allowed: " + m.getSupportedMethods());
            case ServerWebInputException in when jsonCause(in) != null -> JsonProblems.toApi(jsonCause(in));
            case ServerWebInputException in -> ApiException.invalid(null, "invalid request: " + in.getReason());
            case Throwable t when DatabaseErrors.unavailable(t) -> {
                LOG.warn("[{}] {} {}: database unavailable ({})", dev.pagewarden.platform.http.RequestIds.of(exchange),
                        exchange.getRequest().getMethod(), exchange.getRequest().getPath().value(), t.getMessage());
                yield ApiException.databaseUnavailable();
            }
            case ResponseStatusException rs when rs.getStatusCode().value() == HttpStatus.NOT_FOUND.value() ->
                    ApiException.notFound(null, "not_found", "Unknown path " + exchange.getRequest().getMethod() + " "
                            + exchange.getRequest().getPath().value());
            case ResponseStatusException rs -> ApiException.status(HttpStatus.valueOf(rs.getStatusCode().value()),
                    rs.getReason() == null ? rs.getMessage() : rs.getReason());
            default -> {
                LOG.error("[{}] unexpected failure on {} {}", dev.pagewarden.platform.http.RequestIds.of(exchange),
                        exchange.getRequest().getMethod(), exchange.getRequest().getPath().value(), ex);
                yield ApiException.serverError("internal_error", "internal error (request id "
                        + dev.pagewarden.platform.http.RequestIds.of(exchange) + "; the operator's log has the details)");
            }
        };
    }

    /** The JSON parser's own complaint behind a body Spring could not decode, if that is what failed. */
    private static JacksonException jsonCause(Throwable ex) {
        for (Throwable t = ex; t != null; t = t.getCause()) {
            if (t instanceof JacksonException j) {
                return j;
            }
        }
        return null;
    }
}
