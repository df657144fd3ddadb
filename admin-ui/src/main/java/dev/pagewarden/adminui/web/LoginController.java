package dev.pagewarden.adminui.web;

import dev.pagewarden.incident.Blocking;
import org.springframework.stereotype.Controller;
import org.springframework.ui.Model;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;

/**
 * The login form. POST /admin/login is handled by Spring Security's form login; only an attempt the
 * throttle refused comes through to here, already answered 429, to show the form with why.
 */
@Controller
class LoginController {
    /** Exactly one message: the failed login wins over a stale "logged out" in the same address. */
    @GetMapping("/admin/login")
    Mono<String> login(ServerWebExchange exchange, Model model) {
        var params = exchange.getRequest().getQueryParams();
        if (params.containsKey("error")) {
            model.addAttribute("notice", "error");
        } else if (params.containsKey("logout")) {
            model.addAttribute("notice", "logout");
        }
        return render();
    }

    @PostMapping("/admin/login")
    Mono<String> throttled(ServerWebExchange exchange, Model model) {
        Object seconds = exchange.getAttribute(AdminSecurity.LOGIN_THROTTLED);
        if (seconds == null) {
            return Mono.just("redirect:/admin/login");
        }
        model.addAttribute("notice", "throttled");
        model.addAttribute("retryAfter", seconds);
        return render();
    }

    /** Rendered off the event loop, like every page (a template may still be read from the jar). */
    private static Mono<String> render() {
        return Blocking.call(() -> "admin/login");
    }
}
