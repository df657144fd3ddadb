package dev.pagewarden.adminui.disclosure;

import dev.pagewarden.incident.Blocking;
import dev.pagewarden.incident.disclosure.Disclosure;
import dev.pagewarden.incident.disclosure.DisclosureReviews;
import dev.pagewarden.incident.disclosure.DisclosureService;
import dev.pagewarden.incident.status.StatusUpdateService;
import org.springframework.http.HttpStatus;
import org.springframework.security.core.Authentication;
import org.springframework.stereotype.Controller;
import org.springframework.ui.Model;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.ModelAttribute;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;

@Controller
class DisclosureController {
    private final DisclosureService disclosures;
    private final DisclosureReviews reviews;
    private final Markdown markdown;
    private final StatusUpdateService statusUpdates;

    DisclosureController(DisclosureService disclosures, DisclosureReviews reviews, Markdown markdown,
                         StatusUpdateService statusUpdates) {
        this.disclosures = disclosures;
        this.reviews = reviews;
        this.markdown = markdown;
        this.statusUpdates = statusUpdates;
    }

    @GetMapping("/admin/disclosures")
    Mono<String> list(Model model) {
        return Blocking.call(() -> {
            model.addAttribute("disclosures", disclosures.all());
            return "admin/disclosures";
        });
    }

    /** Opens the incident's current draft, or starts one (pre-filled, or a correction of the published text). */
    @PostMapping("/admin/incidents/{incident}/disclosure")
    Mono<String> draft(@PathVariable long incident, Authentication who) {
        return Blocking.call(() -> "redirect:/admin/disclosures/" + disclosures.draft(incident, who.getName()).id());
    }

    @GetMapping("/admin/disclosures/{id}")
    Mono<String> page(@PathVariable long id, Model model) {
        return Blocking.call(() -> render(id, model));
    }

    private String render(long id, Model model) {
        Disclosure d = disclosures.get(id);
        model.addAttribute("d", d);
        model.addAttribute("bodyHtml", markdown.html(d.body()));
        model.addAttribute("versions", disclosures.versions(d.incidentId()));
        model.addAttribute("notices", disclosures.noticeRows(id));
        model.addAttribute("fourEyes", reviews.fourEyes());
        model.addAttribute("authors", reviews.authors(d));
        model.addAttribute("reviews", reviews.reviews(d));
        model.addAttribute("statusUpdates", statusUpdates.updates(d.incidentId()));
        return "admin/disclosure";
    }

    /**
     * A four-eyes refusal: the disclosure page again, saying why (403 for a review by an author or by an account
     * that does not count as a second person, 409 for an unreviewed publish).
     */
    private Mono<String> refusable(long id, Model model, ServerWebExchange exchange, Runnable step) {
        return Blocking.call(() -> {
            try {
                step.run();
                return "redirect:/admin/disclosures/" + id;
            } catch (DisclosureReviews.Refusal r) {
                exchange.getResponse().setStatusCode(r.forbidden() ? HttpStatus.FORBIDDEN : HttpStatus.CONFLICT);
                model.addAttribute("error", r.getMessage());
                return render(id, model);
            }
        });
    }

    record EditForm(String title, String body) {
    }

    @PostMapping("/admin/disclosures/{id}")
    Mono<String> edit(@PathVariable long id, @ModelAttribute EditForm form, Authentication who) {
        return Blocking.call(() -> {
            disclosures.edit(id, form.title(), form.body(), who.getName());
            return "redirect:/admin/disclosures/" + id;
        });
    }

    @PostMapping("/admin/disclosures/{id}/review")
    Mono<String> review(@PathVariable long id, Authentication who) {
        return Blocking.call(() -> {
            disclosures.submitForReview(id, who.getName());
            return "redirect:/admin/disclosures/" + id;
        });
    }

    @PostMapping("/admin/disclosures/{id}/approve")
    Mono<String> approve(@PathVariable long id, Authentication who, Model model, ServerWebExchange exchange) {
        return refusable(id, model, exchange, () -> disclosures.approve(id, who.getName()));
    }

    @PostMapping("/admin/disclosures/{id}/publish")
    Mono<String> publish(@PathVariable long id, Authentication who, Model model, ServerWebExchange exchange) {
        return refusable(id, model, exchange, () -> disclosures.publish(id, who.getName()));
    }
}
