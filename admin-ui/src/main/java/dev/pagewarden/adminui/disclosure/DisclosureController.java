package dev.pagewarden.adminui.disclosure;

import dev.pagewarden.adminui.Blocking;
import org.springframework.security.core.Authentication;
import org.springframework.stereotype.Controller;
import org.springframework.ui.Model;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.ModelAttribute;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import reactor.core.publisher.Mono;

@Controller
class DisclosureController {
    private final DisclosureService disclosures;
    private final Markdown markdown;

    DisclosureController(DisclosureService disclosures, Markdown markdown) {
        this.disclosures = disclosures;
        this.markdown = markdown;
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
        return Blocking.call(() -> {
            Disclosure d = disclosures.get(id);
            model.addAttribute("d", d);
            model.addAttribute("bodyHtml", markdown.html(d.body()));
            model.addAttribute("versions", disclosures.versions(d.incidentId()));
            model.addAttribute("notices", disclosures.noticeRows(id));
            return "admin/disclosure";
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

    @PostMapping("/admin/disclosures/{id}/publish")
    Mono<String> publish(@PathVariable long id, Authentication who) {
        return Blocking.call(() -> {
            disclosures.publish(id, who.getName());
            return "redirect:/admin/disclosures/" + id;
        });
    }
}
