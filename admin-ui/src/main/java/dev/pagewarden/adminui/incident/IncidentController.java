package dev.pagewarden.adminui.incident;

import dev.pagewarden.db.audit.BlastRadius;
import dev.pagewarden.incident.Blocking;
import dev.pagewarden.incident.PlatformPort;
import dev.pagewarden.incident.incident.FrozenBlastRadius;
import dev.pagewarden.incident.incident.FrozenBlastRadiusService;
import dev.pagewarden.incident.incident.Incident;
import dev.pagewarden.incident.incident.IncidentService;
import org.springframework.security.core.Authentication;
import org.springframework.stereotype.Controller;
import org.springframework.ui.Model;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.ModelAttribute;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import reactor.core.publisher.Mono;

import java.util.List;
import java.util.Locale;

@Controller
class IncidentController {
    private final IncidentService incidents;
    private final PlatformPort platform;
    private final FrozenBlastRadiusService frozen;
    private final IncidentForensics forensics;

    IncidentController(IncidentService incidents, PlatformPort platform, FrozenBlastRadiusService frozen,
                       IncidentForensics forensics) {
        this.incidents = incidents;
        this.platform = platform;
        this.frozen = frozen;
        this.forensics = forensics;
    }

    @GetMapping("/admin/incidents/{id}")
    Mono<String> page(@PathVariable long id, Model model) {
        return Blocking.call(() -> {
            Incident incident = incidents.get(id);
            model.addAttribute("incident", incident);
            model.addAttribute("window", incidents.window(incident));
            List<Incident.Entry> timeline = incidents.timeline(id);
            model.addAttribute("timeline", timeline);
            BlastRadius radius = incidents.blastRadius(incident);
            model.addAttribute("radius", radius);
            // each showing recomputes the published sets: a difference is recorded and raised, never taken
            frozen.recheckIncident(id);
            List<FrozenBlastRadius> frozenSets = frozen.ofIncident(id);
            model.addAttribute("frozen", frozenSets);
            boolean modelPrivate = incident.model() != null && platform.isModelPrivate(incident.model());
            model.addAttribute("modelPrivate", modelPrivate);
            IncidentForensics.View view = forensics.of(incident, radius, timeline, modelPrivate, frozenSets);
            model.addAttribute("summary", view.summary());
            model.addAttribute("checklist", view.checklist());
            model.addAttribute("names", view.names());
            model.addAttribute("exposureChart", view.timelineSvg());
            model.addAttribute("tenantMatrix", view.matrixSvg());
            model.addAttribute("statuses", Incident.Status.values());
            return "admin/incident";
        });
    }

    /**
     * The confirmation before a step that cannot be taken back quietly: taking the model private (every tenant loses
     * it at once) and resolving the incident (it leaves the open incidents and the overview's banner). Works without
     * JavaScript; the step itself is the POST its form sends.
     */
    @GetMapping("/admin/incidents/{id}/confirm/{action}")
    Mono<String> confirm(@PathVariable long id, @PathVariable String action, Model model) {
        return Blocking.call(() -> {
            Incident incident = incidents.get(id);
            model.addAttribute("incident", incident);
            switch (action) {
                case "model-private" -> {
                    if (incident.model() == null) {
                        throw new IllegalArgumentException("incident " + id + " names no model to take private");
                    }
                    model.addAttribute("title", "Make model " + incident.model() + " private");
                    model.addAttribute("what", "Every tenant loses model " + incident.model()
                            + " at once: new requests are refused with model_unavailable (503) until an admin restores it."
                            + " The step is recorded in the incident's timeline and the admin audit.");
                    model.addAttribute("action", "/admin/incidents/" + id + "/model-private");
                    model.addAttribute("status", null);
                }
                case "resolve" -> {
                    BlastRadius radius = incidents.blastRadius(incident);
                    model.addAttribute("title", "Mark incident " + id + " resolved");
                    model.addAttribute("what", "The incident leaves the open incidents and the overview's banner; its "
                            + radius.affectedResponses() + " affected response(s) stay in its evidence. The step is recorded in the"
                            + " incident's timeline and the admin audit.");
                    model.addAttribute("action", "/admin/incidents/" + id + "/status");
                    model.addAttribute("status", Incident.Status.RESOLVED.label());
                }
                default -> throw new IllegalArgumentException("unknown step '" + action + "': model-private or resolve");
            }
            return "admin/incident-confirm";
        });
    }

    record StatusForm(String status) {
    }

    @PostMapping("/admin/incidents/{id}/status")
    Mono<String> status(@PathVariable long id, @ModelAttribute StatusForm form, Authentication who) {
        return Blocking.call(() -> {
            Incident.Status to;
            try {
                to = Incident.Status.valueOf(String.valueOf(form.status()).toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("unknown status '" + form.status()
                        + "': investigating, identified, mitigated or resolved");
            }
            incidents.setStatus(id, to, who.getName());
            return "redirect:/admin/incidents/" + id;
        });
    }

    record NoteForm(String text) {
    }

    @PostMapping("/admin/incidents/{id}/notes")
    Mono<String> note(@PathVariable long id, @ModelAttribute NoteForm form, Authentication who) {
        return Blocking.call(() -> {
            incidents.note(id, form.text(), who.getName());
            return "redirect:/admin/incidents/" + id;
        });
    }

    @PostMapping("/admin/incidents/{id}/model-private")
    Mono<String> takeDown(@PathVariable long id, Authentication who) {
        return Blocking.call(() -> {
            incidents.setModelPrivate(id, true, who.getName());
            return "redirect:/admin/incidents/" + id;
        });
    }

    @PostMapping("/admin/incidents/{id}/model-public")
    Mono<String> restore(@PathVariable long id, Authentication who) {
        return Blocking.call(() -> {
            incidents.setModelPrivate(id, false, who.getName());
            return "redirect:/admin/incidents/" + id;
        });
    }
}
