package dev.pagewarden.adminui.audit;

import dev.pagewarden.adminui.names.NameLookup;
import dev.pagewarden.adminui.names.Names;
import dev.pagewarden.db.audit.PageRead;
import dev.pagewarden.db.audit.SlotWriter;
import dev.pagewarden.incident.Blocking;
import dev.pagewarden.db.audit.Exposure;
import dev.pagewarden.incident.audit.AdminAuditFilter;
import dev.pagewarden.incident.audit.AdminAuditQuery;
import dev.pagewarden.incident.disclosure.DisclosureReviews;
import dev.pagewarden.incident.input.Paging;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.stereotype.Controller;
import org.springframework.ui.Model;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RequestParam;
import reactor.core.publisher.Mono;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.HashSet;
import java.util.Set;

/**
 * The audit page: request lookup (lineage and receipt verification) and the exposure finder (grouped by tenant
 * pair, paged), with CSV export; the latest admin actions, and the disclosure reviews by accounts that do not count as a second person.
 */
@Controller
class AuditPageController {
    /** How many of the latest reviews the four-eyes check looks at. */
    private static final int REVIEWS_CHECKED = 200;
    private final AuditService audit;
    private final AdminAuditQuery adminAudit;
    private final DisclosureReviews reviews;
    private final NameLookup names;

    AuditPageController(AuditService audit, AdminAuditQuery adminAudit, DisclosureReviews reviews, NameLookup names) {
        this.audit = audit;
        this.adminAudit = adminAudit;
        this.reviews = reviews;
        this.names = names;
    }

    /** Tenant pairs per page of the exposure finder. */
    static final int GROUPS_PER_PAGE = 20;
    /** Admin actions shown on this page; the rest are on the admin actions page. */
    private static final int LATEST_ACTIONS = 10;

    @GetMapping("/admin/audit")
    Mono<String> page(@RequestParam(required = false) String from, @RequestParam(required = false) String to,
                      @RequestParam(required = false) String node, @RequestParam(required = false) String worker,
                      @RequestParam(required = false) Integer page, Model model, ServerHttpResponse response) {
        return Blocking.call(() -> {
            Instant now = Instant.now().truncatedTo(ChronoUnit.SECONDS);
            // the form is refilled with what was typed, so a mistake is corrected in place rather than retyped
            model.addAttribute("from", from == null ? now.minus(Duration.ofHours(1)).toString() : from);
            model.addAttribute("to", to == null ? now.plusSeconds(60).toString() : to);
            model.addAttribute("node", node == null ? "" : node);
            model.addAttribute("worker", worker == null ? "" : worker);
            if (from != null) {
                try {
                    List<Exposure> exposures = audit.exposures(AuditService.parseTime("from", from),
                            AuditService.parseTime("to", to), node, worker);
                    model.addAttribute("exposureTotal", exposures.size());
                    model.addAttribute("groups", new Paging(page == null ? 1 : page, GROUPS_PER_PAGE).slice(ExposureGroups.of(exposures)));
                } catch (IllegalArgumentException e) {
                    response.setStatusCode(HttpStatus.BAD_REQUEST);
                    model.addAttribute("exposureError", e.getMessage());
                }
            }
            model.addAttribute("adminAudit", adminAudit.page(AdminAuditFilter.NONE, new Paging(1, LATEST_ACTIONS)).rows());
            model.addAttribute("flaggedReviews", reviews.flagged(REVIEWS_CHECKED));
            return "admin/audit";
        });
    }

    @GetMapping("/admin/audit/lookup")
    Mono<String> lookup(@RequestParam String id) {
        AuditService.checkRequestId(id);
        return Mono.just("redirect:/admin/audit/requests/" + id.strip());
    }

    @GetMapping("/admin/audit/requests/{id}")
    Mono<String> request(@PathVariable String id, Model model) {
        return Blocking.call(() -> {
            AuditService.RequestView r = audit.request(id);
            model.addAttribute("r", r);
            model.addAttribute("names", names(r));
            return "admin/audit-request";
        });
    }

    /** The request's own tenant and id, and those of every writer of the data it read. */
    private Names names(AuditService.RequestView r) {
        Set<String> tenants = new HashSet<>();
        Set<Long> requests = new HashSet<>(Set.of(r.id()));
        if (r.row().get("tenant_id") instanceof String t) {
            tenants.add(t);
        }
        for (PageRead p : r.lineage().reads()) {
            for (SlotWriter w : p.writers()) {
                if (w.writerTenant() != null) {
                    tenants.add(w.writerTenant());
                }
                requests.add(w.writerRequest());
            }
        }
        return names.of(tenants, requests);
    }

    @GetMapping("/admin/audit/exposures.csv")
    Mono<ResponseEntity<String>> csv(@RequestParam String from, @RequestParam String to,
                                     @RequestParam(required = false) String node,
                                     @RequestParam(required = false) String worker) {
        return Blocking.call(() -> {
            return ResponseEntity.ok().contentType(MediaType.parseMediaType("text/csv;charset=UTF-8"))
                    .header(HttpHeaders.CONTENT_DISPOSITION, "attachment; filename=\"exposures.csv\"")
                    .body(AuditService.csv(audit.exposures(AuditService.parseTime("from", from),
                            AuditService.parseTime("to", to), node, worker)));
        });
    }
}
