package dev.pagewarden.adminui.audit;

import dev.pagewarden.adminui.web.Csv;
import dev.pagewarden.incident.Blocking;
import dev.pagewarden.incident.audit.AdminAuditFilter;
import dev.pagewarden.incident.audit.AdminAuditLog;
import dev.pagewarden.incident.audit.AdminAuditQuery;
import dev.pagewarden.incident.input.Paging;
import dev.pagewarden.incident.input.Times;
import org.springframework.http.ResponseEntity;
import org.springframework.stereotype.Controller;
import org.springframework.ui.Model;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.ModelAttribute;
import org.springframework.web.util.UriComponentsBuilder;
import reactor.core.publisher.Mono;

/** The admin audit log: who did what and when, filtered by actor, action and time, paged, exported as CSV. */
@Controller
class AdminActionsController {
    /** The most rows one CSV export holds. */
    static final int CSV_MAX = 50_000;

    private final AdminAuditQuery query;

    AdminActionsController(AdminAuditQuery query) {
        this.query = query;
    }

    /** The page's request parameters as typed (kept to refill the form and to build the links). */
    record Params(String actor, String action, String from, String to, Integer page, Integer size) {
        AdminAuditFilter filter() {
            return new AdminAuditFilter(actor, action, Times.parseOptional("from", from), Times.parseOptional("to", to));
        }

        public String page(int n) {
            return url("/admin/audit/actions").queryParam("page", n).encode().build().toUriString();
        }

        public String csv() {
            return url("/admin/audit/actions.csv").encode().build().toUriString();
        }

        private UriComponentsBuilder url(String path) {
            UriComponentsBuilder b = UriComponentsBuilder.fromPath(path);
            for (String[] p : new String[][]{{"actor", actor}, {"action", action}, {"from", from}, {"to", to},
                    {"size", size == null ? null : size.toString()}}) {
                if (p[1] != null && !p[1].isBlank()) {
                    b.queryParam(p[0], p[1]);
                }
            }
            return b;
        }
    }

    @GetMapping("/admin/audit/actions")
    Mono<String> page(@ModelAttribute("params") Params params, Model model) {
        return Blocking.call(() -> {
            model.addAttribute("result", query.page(params.filter(), Paging.of(params.page(), params.size())));
            model.addAttribute("actions", query.actions());
            return "admin/admin-actions";
        });
    }

    @GetMapping("/admin/audit/actions.csv")
    Mono<ResponseEntity<String>> csv(@ModelAttribute Params params) {
        return Blocking.call(() -> {
            Csv csv = new Csv("id", "at", "actor", "action", "target", "details");
            for (AdminAuditLog.Entry e : query.all(params.filter(), CSV_MAX)) {
                csv.row(e.id(), e.at(), e.actor(), e.action(), e.target(), e.details());
            }
            return csv.download("admin-actions.csv");
        });
    }
}
