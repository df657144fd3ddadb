package dev.pagewarden.platform.error;

import dev.pagewarden.incident.input.InvalidTextException;
import dev.pagewarden.platform.database.DatabaseErrors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.core.annotation.Order;
import org.springframework.http.HttpStatus;
import org.springframework.http.InvalidMediaTypeException;
import org.springframework.stereotype.Component;
import org.springframework.web.server.MethodNotAllowedException;
import org.springframework.web.server.NotAcceptableStatusException;
import org.springframework.web.server.ResponseStatusException;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.ServerWebInputException;
import org.springframework.web.server.UnsupportedMediaTypeStatusException;
import org.springframework.web.server.WebExceptionHandler;
import reactor.core.publisher.Mono;
import tools.jackson.core.JacksonException;

/**
 * Every failure leaves as an OpenAI-shaped error body with the right status: on the tenant API ({@code /v1}),
 * the admin API ({@code /admin/api}), the public pages and documents ({@code /report}, {@code /status.json},
 * {@code /.well-known/...}) and for every refusal anywhere (the admin pages answer their own refusals with
 * their error page first, see the admin UI's {@code UiErrors}; what reaches this handler, such as a 406 or 415
 * decided before any page ran, gets this body). Only an unexpected failure of an admin page shown to a browser
 * goes on to Spring Boot's handler. Refusals are logged without a stack trace; an unexpected failure logs one.
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
        boolean refusal = ex instanceof ApiException || ex instanceof IllegalArgumentException
                || ex instanceof ResponseStatusException;
        if (adminUi && !refusal && acceptsHtml(exchange)) {
            return Mono.error(ex);
        }
        return responses.write(exchange, toApi(exchange, ex));
    }

    /** Whether the client named HTML among what it accepts (a browser); a bare or absent Accept is not. */
    private static boolean acceptsHtml(ServerWebExchange exchange) {
        try {
            return exchange.getRequest().getHeaders().getAccept().stream()
                    .anyMatch(t -> t.getType().equals("text") && t.getSubtype().equals("html"));
        } catch (InvalidMediaTypeException e) {
            return false;
        }
    }

    static ApiException toApi(ServerWebExchange exchange, Throwable ex) {
        return switch (ex) {
            case ApiException api -> api;
            case InvalidTextException text -> ApiException.invalid(text.field(), text.getMessage());
            case IllegalArgumentException iae -> ApiException.invalid(null, iae.getMessage());
            case UnsupportedMediaTypeStatusException u -> ApiException.status(HttpStatus.UNSUPPORTED_MEDIA_TYPE,
                    "unsupported content type " + u.getContentType() + "; send "
                    + (u.getSupportedMediaTypes().isEmpty() ? "application/json" : u.getSupportedMediaTypes()));
            case NotAcceptableStatusException n -> ApiException.status(HttpStatus.NOT_ACCEPTABLE,
                    "cannot answer in any type the Accept header names; this path answers " + n.getSupportedMediaTypes());
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
