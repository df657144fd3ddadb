package dev.pagewarden.adminui.incident;

import dev.pagewarden.adminui.web.Csv;
import dev.pagewarden.incident.Blocking;
import dev.pagewarden.incident.incident.Incident;
import dev.pagewarden.incident.incident.IncidentFilter;
import dev.pagewarden.incident.incident.IncidentQuery;
import dev.pagewarden.incident.input.Paging;
import dev.pagewarden.incident.input.Times;
import org.springframework.http.ResponseEntity;
import org.springframework.stereotype.Controller;
import org.springframework.ui.Model;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.ModelAttribute;
import org.springframework.web.util.UriComponentsBuilder;
import reactor.core.publisher.Mono;

import java.util.Locale;

/** The incident list: filtered, searched, sorted and paged; the same filter exported as CSV. */
@Controller
class IncidentListController {
    /** The most rows one CSV export holds. */
    static final int CSV_MAX = 50_000;

    private final IncidentQuery query;

    IncidentListController(IncidentQuery query) {
        this.query = query;
    }

    /** The list's request parameters, as typed (kept to refill the form and to build the links). */
    record Params(String status, String severity, String tenant, String from, String to, String q, String sort, String dir,
                  Integer page, Integer size) {
        IncidentFilter filter() {
            return IncidentFilter.of(status, severity, tenant, Times.parseOptional("from", from), Times.parseOptional("to", to),
                    q, sort, dir);
        }

        /** This list's address with the same filter, sorted by {@code sortBy} (the way clicking its column header asks). */
        public String sortedBy(String sortBy) {
            IncidentFilter f = filter();
            boolean same = f.sort().label().equals(sortBy);
            String d = same ? (f.descending() ? "asc" : "desc") : (sortBy.equals("title") ? "asc" : "desc");
            return url("/admin/incidents", sortBy, d, null);
        }

        /** Page {@code n} of this list. */
        public String page(int n) {
            return url("/admin/incidents", sort, dir, n);
        }

        /** The CSV of this list's filter (every page). */
        public String csv() {
            return url("/admin/incidents.csv", sort, dir, null);
        }

        private String url(String path, String sortBy, String direction, Integer n) {
            UriComponentsBuilder b = UriComponentsBuilder.fromPath(path);
            add(b, "status", status);
            add(b, "severity", severity);
            add(b, "tenant", tenant);
            add(b, "from", from);
            add(b, "to", to);
            add(b, "q", q);
            add(b, "sort", sortBy);
            add(b, "dir", direction);
            add(b, "size", size == null ? null : size.toString());
            add(b, "page", n == null ? null : n.toString());
            return b.encode().build().toUriString();
        }

        private static void add(UriComponentsBuilder b, String name, String value) {
            if (value != null && !value.isBlank()) {
                b.queryParam(name, value);
            }
        }
    }

    @GetMapping("/admin/incidents")
    Mono<String> list(@ModelAttribute("params") Params params, Model model) {
        return Blocking.call(() -> {
            IncidentFilter filter = params.filter();
            model.addAttribute("result", query.page(filter, Paging.of(params.page(), params.size())));
            model.addAttribute("filter", filter);
            model.addAttribute("statuses", Incident.Status.values());
            model.addAttribute("sortColumn", filter.sort().label());
            model.addAttribute("sortDir", filter.descending() ? "desc" : "asc");
            return "admin/incidents";
        });
    }

    @GetMapping("/admin/incidents.csv")
    Mono<ResponseEntity<String>> csv(@ModelAttribute Params params) {
        return Blocking.call(() -> {
            Csv csv = new Csv("id", "title", "status", "severity", "model", "node", "worker", "events", "opened_at",
                    "first_event", "last_event", "resolved_at");
            for (Incident i : query.all(params.filter(), CSV_MAX)) {
                csv.row(i.id(), i.title(), i.status().label(), i.severity().toLowerCase(Locale.ROOT), i.model(), i.node(),
                        i.worker(), i.events(), i.openedAt(), i.firstEvent(), i.lastEvent(), i.resolvedAt());
            }
            return csv.download("incidents.csv");
        });
    }
}
