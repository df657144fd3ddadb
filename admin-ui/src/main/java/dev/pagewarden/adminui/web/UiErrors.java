package dev.pagewarden.adminui.web;

import org.springframework.http.HttpStatus;
import org.springframework.ui.Model;
import org.springframework.web.bind.annotation.ControllerAdvice;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.server.ResponseStatusException;
import org.springframework.web.server.ServerWebExchange;

import java.util.NoSuchElementException;

/** Bad input on an admin page answers 400 (or the refusal's own 4xx) with the reason on an error page; an unknown thing 404. */
@ControllerAdvice(basePackages = "dev.pagewarden.adminui")
class UiErrors {
    @ExceptionHandler(IllegalArgumentException.class)
    String badRequest(IllegalArgumentException e, ServerWebExchange exchange, Model model) {
        exchange.getResponse().setStatusCode(HttpStatus.BAD_REQUEST);
        model.addAttribute("error", e.getMessage());
        return "admin/error";
    }

    /** A missing or malformed parameter, or another refusal Spring raised before the page ran: its own 4xx. */
    @ExceptionHandler(ResponseStatusException.class)
    String refused(ResponseStatusException e, ServerWebExchange exchange, Model model) throws ResponseStatusException {
        if (!e.getStatusCode().is4xxClientError()) {
            throw e;
        }
        exchange.getResponse().setStatusCode(e.getStatusCode());
        model.addAttribute("error", e.getReason() == null ? e.getStatusCode().toString() : e.getReason());
        return "admin/error";
    }

    @ExceptionHandler(NoSuchElementException.class)
    String notFound(NoSuchElementException e, ServerWebExchange exchange, Model model) {
        exchange.getResponse().setStatusCode(HttpStatus.NOT_FOUND);
        model.addAttribute("error", e.getMessage());
        return "admin/error";
    }
}
