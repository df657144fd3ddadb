package dev.pagewarden.adminui.report;

import dev.pagewarden.incident.Blocking;
import dev.pagewarden.incident.report.OutsideReports;
import org.springframework.stereotype.Controller;
import org.springframework.ui.Model;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import reactor.core.publisher.Mono;

/** The outside report behind an incident, as a panel of the incident page (loaded by htmx; viewer role). */
@Controller
class ReportPanelController {
    private final OutsideReports reports;

    ReportPanelController(OutsideReports reports) {
        this.reports = reports;
    }

    @GetMapping("/admin/incidents/{id}/report")
    Mono<String> panel(@PathVariable long id, Model model) {
        return Blocking.call(() -> {
            model.addAttribute("reports", reports.forIncident(id));
            return "admin/incident-report :: panel";
        });
    }
}
