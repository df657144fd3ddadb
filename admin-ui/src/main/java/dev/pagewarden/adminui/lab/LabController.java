package dev.pagewarden.adminui.lab;

import dev.pagewarden.incident.Blocking;
import dev.pagewarden.incident.PlatformPort;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.security.core.Authentication;
import org.springframework.stereotype.Controller;
import org.springframework.ui.Model;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.ModelAttribute;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.ResponseBody;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;

import java.util.Map;

/** The lab page and {@code POST /admin/api/lab/replay {"scenario": NAME}}; both refused unless lab mode is on. */
@Controller
class LabController {
    private final LabService lab;
    private final PlatformPort platform;

    LabController(LabService lab, PlatformPort platform) {
        this.lab = lab;
        this.platform = platform;
    }

    @GetMapping("/admin/lab")
    Mono<String> page(Model model, ServerWebExchange exchange) {
        fill(model);
        if (!platform.labEnabled()) {
            exchange.getResponse().setStatusCode(HttpStatus.FORBIDDEN);
        }
        return Blocking.call(() -> "admin/lab");
    }

    record ReplayForm(String scenario) {
    }

    @PostMapping("/admin/lab/replay")
    Mono<String> replayFromPage(@ModelAttribute ReplayForm form, Authentication who, Model model, ServerWebExchange exchange) {
        fill(model);
        if (!platform.labEnabled()) {
            exchange.getResponse().setStatusCode(HttpStatus.FORBIDDEN);
            return Blocking.call(() -> "admin/lab");
        }
        return Blocking.call(() -> {
            model.addAttribute("result", lab.replay(form.scenario(), who.getName()));
            model.addAttribute("scenario", form.scenario());
            return "admin/lab";
        });
    }

    @PostMapping("/admin/api/lab/replay")
    @ResponseBody
    Mono<ResponseEntity<Map<String, Object>>> replay(@RequestBody Map<String, Object> body, Authentication who) {
        LabService.LabDisabledException off = lab.unavailable();
        if (off != null) {
            String code = off instanceof LabService.LabNotInstalledException ? "lab_not_installed" : "lab_disabled";
            return Mono.just(error(HttpStatus.FORBIDDEN, code, off.getMessage()));
        }
        if (!(body.get("scenario") instanceof String scenario)) {
            return Mono.just(error(HttpStatus.BAD_REQUEST, "invalid_request_error", "'scenario' is required and must be a string"));
        }
        return Blocking.call(() -> {
            try {
                return ResponseEntity.ok(lab.replay(scenario, who.getName()));
            } catch (IllegalArgumentException e) {
                return error(HttpStatus.BAD_REQUEST, "invalid_request_error", e.getMessage());
            } catch (IllegalStateException e) {
                return error(HttpStatus.CONFLICT, "lab_unavailable", e.getMessage());
            }
        });
    }

    private static ResponseEntity<Map<String, Object>> error(HttpStatus status, String code, String message) {
        return ResponseEntity.status(status).body(Map.of("error", Map.of("message", message, "type", code, "code", code)));
    }

    private void fill(Model model) {
        model.addAttribute("scenarios", platform.labScenarios());
        model.addAttribute("faults", platform.labFaults());
    }
}
