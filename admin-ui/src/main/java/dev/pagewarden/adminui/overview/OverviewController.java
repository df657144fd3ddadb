package dev.pagewarden.adminui.overview;

import dev.pagewarden.incident.Blocking;
import dev.pagewarden.incident.PlatformPort;
import dev.pagewarden.incident.incident.IncidentQuery;
import org.springframework.stereotype.Controller;
import org.springframework.ui.Model;
import org.springframework.web.bind.annotation.GetMapping;
import reactor.core.publisher.Mono;

import java.util.List;

/**
 * The overview: each worker's KV capacity against the advertised window (red when it cannot hold one
 * full-window request: the 2026 misconfiguration), pages by state, deferred releases, admission
 * rejections; counts of open incidents and exposures, a banner while a critical incident is open, and what the
 * detectors and the lineage sweep found lately. The panel is re-fetched by htmx every two seconds.
 */
@Controller
class OverviewController {
    /** How many findings and banner entries the overview shows. */
    private static final int RECENT = 15;
    private final PlatformPort platform;
    private final IncidentQuery incidents;

    OverviewController(PlatformPort platform, IncidentQuery incidents) {
        this.platform = platform;
        this.incidents = incidents;
    }

    record PoolRow(String worker, long capacityTokens, int window, boolean tooSmall, int free, int owned, int deferred,
                   int quarantined, int total) {
        public int pct(int n) {
            return total == 0 ? 0 : (int) Math.round(100.0 * n / total);
        }
    }

    @GetMapping({"/admin", "/admin/"})
    Mono<String> page(Model model) {
        return fill(model).thenReturn("admin/overview");
    }

    @GetMapping("/admin/overview/panel")
    Mono<String> panel(Model model) {
        return fill(model).thenReturn("admin/overview :: panel");
    }

    private Mono<Void> fill(Model model) {
        return Blocking.run(() -> {
            int window = platform.contextWindow();
            List<PoolRow> rows = platform.pools().stream().map(p -> {
                var s = p.pagesByState();
                int free = s.getOrDefault("free", 0), owned = s.getOrDefault("owned", 0),
                        deferred = s.getOrDefault("deferred", 0), quarantined = s.getOrDefault("quarantined", 0);
                int total = s.values().stream().mapToInt(Integer::intValue).sum();
                return new PoolRow(p.worker(), p.capacityTokens(), window, p.capacityTokens() < window, free, owned,
                        deferred, quarantined, total);
            }).toList();
            model.addAttribute("model", platform.servedModel().orElse(null));
            model.addAttribute("modelPrivate", platform.servedModel().map(platform::isModelPrivate).orElse(false));
            model.addAttribute("window", window);
            model.addAttribute("pools", rows);
            model.addAttribute("node", platform.nodeId());
            model.addAttribute("counters", platform.counters());
            // from PostgreSQL: the same on every replica and after a restart, the lineage sweep's findings included
            model.addAttribute("findings", incidents.recentFindings(RECENT));
            model.addAttribute("counts", incidents.counts());
            model.addAttribute("openCritical", incidents.openCritical(RECENT));
        });
    }
}
