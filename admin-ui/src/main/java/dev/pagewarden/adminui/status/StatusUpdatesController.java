package dev.pagewarden.adminui.status;

import dev.pagewarden.incident.Blocking;
import dev.pagewarden.incident.disclosure.DisclosureService;
import dev.pagewarden.incident.status.PublicState;
import dev.pagewarden.incident.status.StatusUpdateService;
import org.springframework.security.core.Authentication;
import org.springframework.stereotype.Controller;
import org.springframework.web.bind.annotation.ModelAttribute;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import reactor.core.publisher.Mono;

/**
 * Posts a public status update of the disclosure's incident from its disclosure page (publishers: the text is
 * public at once). A state that would go back is refused on the error page.
 */
@Controller
class StatusUpdatesController {
    private final DisclosureService disclosures;
    private final StatusUpdateService updates;

    StatusUpdatesController(DisclosureService disclosures, StatusUpdateService updates) {
        this.disclosures = disclosures;
        this.updates = updates;
    }

    record UpdateForm(String state, String title, String text) {
    }

    @PostMapping("/admin/disclosures/{id}/status-update")
    Mono<String> post(@PathVariable long id, @ModelAttribute UpdateForm form, Authentication who) {
        return Blocking.call(() -> {
            long incident = disclosures.get(id).incidentId();
            updates.post(incident, PublicState.parse(form.state()), form.title(), form.text(), who.getName());
            return "redirect:/admin/disclosures/" + id + "#status-updates";
        });
    }
}
