package dev.pagewarden.adminui.disclosure;

import dev.pagewarden.adminui.names.NameLookup;
import dev.pagewarden.incident.Blocking;
import dev.pagewarden.incident.disclosure.Disclosure;
import dev.pagewarden.incident.disclosure.DisclosureReviews;
import dev.pagewarden.incident.disclosure.DisclosureService;
import dev.pagewarden.incident.disclosure.LineDiff;
import dev.pagewarden.incident.disclosure.Placeholders;
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

import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;

@Controller
class DisclosureController {
    private final DisclosureService disclosures;
    private final DisclosureReviews reviews;
    private final Markdown markdown;
    private final StatusUpdateService statusUpdates;
    private final NameLookup names;

    DisclosureController(DisclosureService disclosures, DisclosureReviews reviews, Markdown markdown,
                         StatusUpdateService statusUpdates, NameLookup names) {
        this.names = names;
        this.disclosures = disclosures;
        this.reviews = reviews;
        this.markdown = markdown;
        this.statusUpdates = statusUpdates;
    }

    @GetMapping("/admin/disclosures")
    Mono<String> list(Model model, Authentication who) {
        return Blocking.call(() -> {
            model.addAttribute("disclosures", disclosures.all());
            model.addAttribute("queue", reviews.waitingFor(who.getName(), disclosures));
            return "admin/disclosures";
        });
    }

    /** Opens the incident's current draft, or starts one (pre-filled, or a correction of the published text). */
    @PostMapping("/admin/incidents/{incident}/disclosure")
    Mono<String> draft(@PathVariable long incident, Authentication who) {
        return Blocking.call(() -> "redirect:/admin/disclosures/" + disclosures.draft(incident, who.getName()).id());
    }

    @GetMapping("/admin/disclosures/{id}")
    Mono<String> page(@PathVariable long id, Model model, Authentication who) {
        return Blocking.call(() -> render(id, model, who));
    }

    /** One line of the diff against the previous version, as the page shows it. */
    record DiffLine(String kind, char sign, String text) {
    }

    private String render(long id, Model model, Authentication who) {
        Disclosure d = disclosures.get(id);
        List<Disclosure> versions = disclosures.versions(d.incidentId());
        Set<String> authors = reviews.authors(d);
        model.addAttribute("d", d);
        model.addAttribute("bodyHtml", markdown.html(d.body()));
        model.addAttribute("versions", versions);
        List<DisclosureService.NoticeRow> notices = disclosures.noticeRows(id);
        model.addAttribute("notices", notices);
        model.addAttribute("names", names.of(notices.stream().map(DisclosureService.NoticeRow::tenantId).toList(), List.of()));
        model.addAttribute("fourEyes", reviews.fourEyes());
        model.addAttribute("authors", authors);
        model.addAttribute("reviews", reviews.reviews(d));
        model.addAttribute("placeholders", Placeholders.in(d.title() + "\n" + d.body()));
        // under four eyes an author's approval is always refused: the page says so instead of offering it
        model.addAttribute("ownText", reviews.fourEyes() && authors.contains(who.getName()));
        Optional<Disclosure> previous = versions.stream().filter(v -> v.version() == d.version() - 1).findFirst();
        model.addAttribute("previous", previous.orElse(null));
        model.addAttribute("diff", previous.map(p -> LineDiff.of(p.title() + "\n\n" + p.body(), d.title() + "\n\n" + d.body())
                .stream().map(l -> new DiffLine(l.kind().name().toLowerCase(java.util.Locale.ROOT), l.kind().sign(), l.text()))
                .toList()).orElse(List.of()));
        model.addAttribute("statusUpdates", statusUpdates.updates(d.incidentId()));
        return "admin/disclosure";
    }

    /**
     * A refused step: the disclosure page again, saying why (403 for a review by an author or by an account that
     * does not count as a second person, 409 for an unreviewed publish or template placeholders left in the text).
     */
    private Mono<String> refusable(long id, Model model, Authentication who, ServerWebExchange exchange, Supplier<String> step) {
        return Blocking.call(() -> {
            try {
                return step.get();
            } catch (DisclosureReviews.Refusal r) {
                exchange.getResponse().setStatusCode(r.forbidden() ? HttpStatus.FORBIDDEN : HttpStatus.CONFLICT);
                model.addAttribute("error", r.getMessage());
            } catch (Placeholders.Unfilled u) {
                exchange.getResponse().setStatusCode(HttpStatus.CONFLICT);
                model.addAttribute("error", u.getMessage());
            }
            return render(id, model, who);
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
        return refusable(id, model, who, exchange, () -> {
            disclosures.approve(id, who.getName());
            return "redirect:/admin/disclosures/" + id;
        });
    }

    /**
     * The confirmation before publishing: what a publish does now (the tenants it notifies, the public status page),
     * or, when it would be refused, the disclosure page saying why. Nothing is written.
     */
    @GetMapping("/admin/disclosures/{id}/publish")
    Mono<String> confirmPublish(@PathVariable long id, Authentication who, Model model, ServerWebExchange exchange) {
        return refusable(id, model, who, exchange, () -> {
            DisclosureService.PublishPlan plan = disclosures.planPublish(id);
            int tenants = plan.affectedTenants().size();
            model.addAttribute("d", plan.disclosure());
            model.addAttribute("tenants", plan.affectedTenants());
            model.addAttribute("summary", "Publish: notify " + tenants + (tenants == 1 ? " tenant" : " tenants")
                    + " and post to /status");
            return "admin/disclosure-publish";
        });
    }

    @PostMapping("/admin/disclosures/{id}/publish")
    Mono<String> publish(@PathVariable long id, Authentication who, Model model, ServerWebExchange exchange) {
        return refusable(id, model, who, exchange, () -> {
            disclosures.publish(id, who.getName());
            return "redirect:/admin/disclosures/" + id;
        });
    }
}
