package dev.pagewarden.adminui.tenants;

import dev.pagewarden.incident.Blocking;
import dev.pagewarden.incident.PlatformPort;
import dev.pagewarden.incident.audit.AdminAuditLog;
import org.springframework.security.core.Authentication;
import org.springframework.stereotype.Controller;
import org.springframework.ui.Model;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.ModelAttribute;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import reactor.core.publisher.Mono;

import java.util.NoSuchElementException;

/**
 * Tenants: list and create; per tenant its keys (issued once, revocable), limits and fair-admission weight, with its
 * requests waiting and tokens served now. Changes need the admin role.
 */
@Controller
class TenantsController {
    private final PlatformPort platform;
    private final AdminAuditLog audit;

    TenantsController(PlatformPort platform, AdminAuditLog audit) {
        this.platform = platform;
        this.audit = audit;
    }

    @GetMapping("/admin/tenants")
    Mono<String> list(Model model) {
        return Blocking.call(() -> {
            model.addAttribute("tenants", platform.tenants());
            model.addAttribute("defaults", platform.newTenantLimits());
            return "admin/tenants";
        });
    }

    record NewTenant(String name) {
    }

    @PostMapping("/admin/tenants")
    Mono<String> create(@ModelAttribute NewTenant form, Authentication who) {
        return Blocking.call(() -> {
            PlatformPort.Tenant t = platform.createTenant(form.name());
            audit.record(who.getName(), "tenant.create", t.id(), t.name());
            return "redirect:/admin/tenants/" + t.id();
        });
    }

    @GetMapping("/admin/tenants/{id}")
    Mono<String> tenant(@PathVariable String id, Model model) {
        return Blocking.call(() -> fill(id, model));
    }

    private String fill(String id, Model model) {
        PlatformPort.Tenant t = platform.tenants().stream().filter(x -> x.id().equals(id)).findFirst()
                .orElseThrow(() -> new NoSuchElementException("no tenant '" + id + "'"));
        model.addAttribute("t", t);
        model.addAttribute("keys", platform.keys(id));
        model.addAttribute("share", platform.share(id));
        return "admin/tenant";
    }

    record KeyForm(String name) {
    }

    @PostMapping("/admin/tenants/{id}/keys")
    Mono<String> issue(@PathVariable String id, @ModelAttribute KeyForm form, Authentication who, Model model) {
        return Blocking.call(() -> {
            String key = platform.issueKey(id, form.name() == null || form.name().isBlank() ? null : form.name().strip());
            audit.record(who.getName(), "key.issue", id, key.substring(0, Math.min(12, key.length())) + "...");
            // shown once, on this response only: never stored in clear
            model.addAttribute("newKey", key);
            return fill(id, model);
        });
    }

    @PostMapping("/admin/tenants/{id}/keys/{prefix}/revoke")
    Mono<String> revoke(@PathVariable String id, @PathVariable String prefix, Authentication who) {
        return Blocking.call(() -> {
            platform.revokeKey(id, prefix);
            audit.record(who.getName(), "key.revoke", id, prefix);
            return "redirect:/admin/tenants/" + id;
        });
    }

    record LimitsForm(String requestsPerMinute, String tokensPerMinute, String maxConcurrent, String maxContext,
                      String weight) {
    }

    @PostMapping("/admin/tenants/{id}/limits")
    Mono<String> limits(@PathVariable String id, @ModelAttribute LimitsForm form, Authentication who) {
        return Blocking.call(() -> {
            platform.setLimits(id, limit("requests per minute", form.requestsPerMinute()),
                    limit("tokens per minute", form.tokensPerMinute()), limit("max concurrent", form.maxConcurrent()),
                    limit("max context", form.maxContext()), weight(form.weight()));
            audit.record(who.getName(), "tenant.limits", id, form.toString());
            return "redirect:/admin/tenants/" + id;
        });
    }

    /** Empty means the default weight, 1; otherwise 1 to 100. */
    private static int weight(String value) {
        if (value == null || value.isBlank()) {
            return 1;
        }
        try {
            int v = Integer.parseInt(value.strip());
            if (v >= 1 && v <= 100) {
                return v;
            }
        } catch (NumberFormatException e) {
            // answered below
        }
        throw new IllegalArgumentException("weight must be an integer from 1 to 100, or empty for 1 (got '" + value + "')");
    }

    /** Empty means no limit; otherwise a positive integer. */
    private static Integer limit(String name, String value) {
        if (value == null || value.isBlank()) {
            return null;
        }
        try {
            int v = Integer.parseInt(value.strip());
            if (v <= 0) {
                throw new NumberFormatException();
            }
            return v;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + " must be a positive integer, or empty for no limit (got '" + value + "')");
        }
    }
}
