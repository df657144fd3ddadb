package dev.pagewarden.adminui.report;

import dev.pagewarden.incident.Blocking;
import dev.pagewarden.incident.incident.IncidentService;
import dev.pagewarden.incident.report.ReportCoverage;
import org.springframework.security.core.Authentication;
import org.springframework.stereotype.Controller;
import org.springframework.ui.Model;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.ModelAttribute;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import reactor.core.publisher.Mono;

/**
 * The outside report behind an incident, as a panel of the incident page (loaded by htmx; viewer role): each named
 * response id with the incident whose blast radius covers it, and the merge into that incident (admin role).
 */
@Controller
class ReportPanelController {
    private final ReportCoverage coverage;
    private final IncidentService incidents;

    ReportPanelController(ReportCoverage coverage, IncidentService incidents) {
        this.coverage = coverage;
        this.incidents = incidents;
    }

    @GetMapping("/admin/incidents/{id}/report")
    Mono<String> panel(@PathVariable long id, Model model) {
        return Blocking.call(() -> {
            model.addAttribute("incident", incidents.get(id));
            model.addAttribute("reports", coverage.forIncident(id));
            return "admin/incident-report :: panel";
        });
    }

    record MergeForm(String into) {
    }

    @PostMapping("/admin/incidents/{id}/merge")
    Mono<String> merge(@PathVariable long id, @ModelAttribute MergeForm form, Authentication who) {
        return Blocking.call(() -> {
            coverage.merge(id, into(form.into()), who.getName());
            return "redirect:/admin/incidents/" + id;
        });
    }

    /** The incident to merge into, as the form sends it: a refusal naming the field, never a binding error. */
    private static long into(String text) {
        try {
            return Long.parseLong(String.valueOf(text).strip());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("'into' must be the number of the incident to merge this one into");
        }
    }
}
