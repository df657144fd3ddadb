package dev.pagewarden.adminui.web;

import dev.pagewarden.adminui.users.AdminUserService;
import dev.pagewarden.adminui.users.SessionAuthorization;
import dev.pagewarden.incident.Blocking;
import org.springframework.http.HttpStatus;
import org.springframework.security.core.Authentication;
import org.springframework.stereotype.Controller;
import org.springframework.ui.Model;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.ModelAttribute;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;

/**
 * Every user's own password: the current one and the new one twice. A password that must be changed (first
 * start, or reset by an admin) brings the user here, and nothing else is open until it is changed. The
 * change ends the user's other sessions; this one goes on, with a new id. (With the login, here rather than in
 * {@code users}: it renews the session the security pieces keep.)
 */
@Controller
class PasswordController {
    private final AdminUserService users;
    private final AdminSecurity security;

    PasswordController(AdminUserService users, AdminSecurity security) {
        this.users = users;
        this.security = security;
    }

    @GetMapping(AdminSecurity.PASSWORD_PAGE)
    Mono<String> page(Authentication who, ServerWebExchange exchange, Model model) {
        if (exchange.getRequest().getQueryParams().containsKey("changed")) {
            model.addAttribute("message", "Your password was changed; your other sessions have ended.");
        }
        return show(who, model);
    }

    record PasswordForm(String current, String password, String confirm) {
    }

    @PostMapping(AdminSecurity.PASSWORD_PAGE)
    Mono<String> change(@ModelAttribute PasswordForm form, Authentication who, ServerWebExchange exchange, Model model) {
        return Blocking.call(() -> {
                    if (form.password() == null || !form.password().equals(form.confirm())) {
                        throw new IllegalArgumentException("the new password and its confirmation differ");
                    }
                    return users.changePassword(who.getName(), form.current(), form.password());
                })
                .flatMap(epoch -> security.sessionContexts().renew(exchange, who.getName())
                        .thenReturn("redirect:" + AdminSecurity.PASSWORD_PAGE + "?changed"))
                .onErrorResume(IllegalArgumentException.class, e -> {
                    model.addAttribute("error", e.getMessage());
                    exchange.getResponse().setStatusCode(HttpStatus.BAD_REQUEST);
                    return show(who, model);
                });
    }

    private static Mono<String> show(Authentication who, Model model) {
        model.addAttribute("mustChange", SessionAuthorization.mustChangePassword(who));
        return Blocking.call(() -> "admin/password");
    }
}
