package dev.pagewarden.adminui.web;

import org.springframework.stereotype.Controller;
import dev.pagewarden.adminui.Blocking;
import org.springframework.web.bind.annotation.GetMapping;
import reactor.core.publisher.Mono;

/** The login form; POST /admin/login is handled by Spring Security's form login. */
@Controller
class LoginController {
    /** Rendered off the event loop, like every page (a template may still be read from the jar). */
    @GetMapping("/admin/login")
    Mono<String> login() {
        return Blocking.call(() -> "admin/login");
    }
}
