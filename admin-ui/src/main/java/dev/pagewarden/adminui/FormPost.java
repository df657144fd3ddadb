package dev.pagewarden.adminui;

import dev.pagewarden.incident.Blocking;

import org.springframework.http.HttpStatus;
import org.springframework.ui.Model;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;

import java.util.concurrent.Callable;

/** An admin form post that shows its page again, with what it did, or with the reason and 400 for bad input (not a stack trace). */
public final class FormPost {
    private FormPost() {
    }

    /**
     * Runs {@code action} off the event loop; on success the model's {@code message} is {@code done}, on an
     * {@link IllegalArgumentException} its {@code error} is the exception's message and the status 400. Then
     * {@code page} fills the model and names the view.
     */
    public static Mono<String> run(Model model, ServerWebExchange exchange, Callable<?> action, String done, Callable<String> page) {
        return Blocking.call(() -> {
            try {
                action.call();
                model.addAttribute("message", done);
            } catch (IllegalArgumentException e) {
                model.addAttribute("error", e.getMessage());
                exchange.getResponse().setStatusCode(HttpStatus.BAD_REQUEST);
            }
            return page.call();
        });
    }
}
