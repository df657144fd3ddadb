package dev.pagewarden.adminui.web;

import org.springframework.http.HttpStatus;
import org.springframework.web.bind.annotation.ControllerAdvice;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.server.ResponseStatusException;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;

import java.util.NoSuchElementException;

/**
 * Bad input on an admin page answers 400 (or the refusal's own 4xx) with the reason on the error page; an unknown
 * thing 404. The page is written by {@link UiErrorPages}: an exception handler's model lacks the pages' common
 * attributes (who is logged in, the CSRF token) that the navigation needs.
 */
@ControllerAdvice(basePackages = "dev.pagewarden.adminui")
class UiErrors {
    private final UiErrorPages pages;

    UiErrors(UiErrorPages pages) {
        this.pages = pages;
    }

    @ExceptionHandler(IllegalArgumentException.class)
    Mono<Void> badRequest(IllegalArgumentException e, ServerWebExchange exchange) {
        return pages.render(exchange, HttpStatus.BAD_REQUEST, e.getMessage());
    }

    /** A missing or malformed parameter, or another refusal Spring raised before the page ran: its own 4xx. */
    @ExceptionHandler(ResponseStatusException.class)
    Mono<Void> refused(ResponseStatusException e, ServerWebExchange exchange) throws ResponseStatusException {
        if (!e.getStatusCode().is4xxClientError()) {
            throw e;
        }
        return pages.render(exchange, e.getStatusCode(), e.getReason() == null ? e.getStatusCode().toString() : e.getReason());
    }

    @ExceptionHandler(NoSuchElementException.class)
    Mono<Void> notFound(NoSuchElementException e, ServerWebExchange exchange) {
        return pages.render(exchange, HttpStatus.NOT_FOUND, e.getMessage());
    }
}
