package dev.pagewarden.adminui.users;

import dev.pagewarden.adminui.FormPost;
import dev.pagewarden.incident.Blocking;
import org.springframework.security.core.Authentication;
import org.springframework.stereotype.Controller;
import org.springframework.ui.Model;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.ModelAttribute;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;

/**
 * Admin page: add admin users, change roles, disable and re-enable, reset a password to a one-time one shown
 * once (admin role only). Each change applies to the user's sessions at their next request.
 */
@Controller
class UsersController {
    private final AdminUserService users;

    UsersController(AdminUserService users) {
        this.users = users;
    }

    @GetMapping("/admin/users")
    Mono<String> page(Model model) {
        return Blocking.call(() -> show(model));
    }

    record NewUser(String username, String password, String role) {
    }

    @PostMapping("/admin/users")
    Mono<String> add(@ModelAttribute NewUser form, Authentication who, Model model, ServerWebExchange exchange) {
        return act(model, exchange, () -> users.create(form.username(), form.password(), AdminRole.parse(form.role()), who.getName()),
                "added " + form.username());
    }

    record RoleForm(String role) {
    }

    @PostMapping("/admin/users/{name}/role")
    Mono<String> role(@PathVariable String name, @ModelAttribute RoleForm form, Authentication who, Model model, ServerWebExchange exchange) {
        return act(model, exchange, () -> users.setRole(name, AdminRole.parse(form.role()), who.getName()), name + " is now " + form.role());
    }

    @PostMapping("/admin/users/{name}/disable")
    Mono<String> disable(@PathVariable String name, Authentication who, Model model, ServerWebExchange exchange) {
        return act(model, exchange, () -> users.setEnabled(name, false, who.getName()), name + " disabled");
    }

    @PostMapping("/admin/users/{name}/enable")
    Mono<String> enable(@PathVariable String name, Authentication who, Model model, ServerWebExchange exchange) {
        return act(model, exchange, () -> users.setEnabled(name, true, who.getName()), name + " enabled");
    }

    @PostMapping("/admin/users/{name}/reset-password")
    Mono<String> resetPassword(@PathVariable String name, Authentication who, Model model, ServerWebExchange exchange) {
        return act(model, exchange, () -> {
            model.addAttribute("oneTimeUser", name);
            model.addAttribute("oneTimePassword", users.resetPassword(name, who.getName()));
            return null;
        }, "password of " + name + " reset; their sessions have ended");
    }

    private Mono<String> act(Model model, ServerWebExchange exchange, java.util.concurrent.Callable<?> action, String done) {
        return FormPost.run(model, exchange, action, done, () -> show(model));
    }

    private String show(Model model) {
        model.addAttribute("users", users.list());
        model.addAttribute("roles", AdminRole.values());
        return "admin/users";
    }
}
