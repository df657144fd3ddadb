package dev.pagewarden.adminui.retention;

import dev.pagewarden.adminui.FormPost;
import dev.pagewarden.incident.Blocking;
import dev.pagewarden.incident.retention.LegalHoldService;
import org.springframework.security.core.Authentication;
import org.springframework.stereotype.Controller;
import org.springframework.ui.Model;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.ModelAttribute;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;

import java.util.concurrent.Callable;

/** Admin page: legal holds on lineage (list, add: responder; release: admin, see {@code AdminSecurity}). */
@Controller
class HoldsController {
    private final LegalHoldService holds;

    HoldsController(LegalHoldService holds) {
        this.holds = holds;
    }

    @GetMapping("/admin/holds")
    Mono<String> page(Model model) {
        return Blocking.call(() -> show(model));
    }

    record NewHold(String from, String to, String reason) {
    }

    @PostMapping("/admin/holds")
    Mono<String> add(@ModelAttribute NewHold form, Authentication who, Model model, ServerWebExchange exchange) {
        return act(model, exchange, () -> holds.add(LegalHoldService.parseTime("from", form.from()),
                LegalHoldService.parseTime("to", form.to()), form.reason(), who.getName()), "hold placed");
    }

    @PostMapping("/admin/holds/{id}/release")
    Mono<String> release(@PathVariable long id, Authentication who, Model model, ServerWebExchange exchange) {
        return act(model, exchange, () -> holds.release(id, who.getName()), "hold " + id + " released");
    }

    private Mono<String> act(Model model, ServerWebExchange exchange, Callable<?> action, String done) {
        return FormPost.run(model, exchange, action, done, () -> show(model));
    }

    private String show(Model model) {
        model.addAttribute("holds", holds.list());
        return "admin/holds";
    }
}
