package dev.pagewarden.adminui.status;

import dev.pagewarden.adminui.disclosure.Markdown;
import dev.pagewarden.incident.Blocking;
import dev.pagewarden.incident.disclosure.Disclosure;
import dev.pagewarden.incident.disclosure.DisclosureService;
import dev.pagewarden.incident.status.PublicIncident;
import dev.pagewarden.incident.status.StatusUpdate;
import dev.pagewarden.incident.status.StatusUpdateService;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.stereotype.Controller;
import org.springframework.ui.Model;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.ResponseBody;
import org.springframework.web.util.HtmlUtils;
import reactor.core.publisher.Mono;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The public status page, no login; HTML, JSON, RSS and Atom: incidents with their public status updates (newest
 * first), and published disclosures.
 */
@Controller
class StatusController {
    private final DisclosureService disclosures;
    private final StatusUpdateService updates;
    private final Markdown markdown;

    StatusController(DisclosureService disclosures, StatusUpdateService updates, Markdown markdown) {
        this.disclosures = disclosures;
        this.updates = updates;
        this.markdown = markdown;
    }

    /** A published disclosure with its Markdown rendered (raw HTML escaped). */
    record Rendered(Disclosure d, String html) {
    }

    @GetMapping("/status")
    Mono<String> page(Model model) {
        return Blocking.call(() -> {
            model.addAttribute("incidents", updates.incidents());
            model.addAttribute("disclosures", disclosures.published().stream()
                    .map(d -> new Rendered(d, markdown.html(d.body()))).toList());
            return "admin/status";
        });
    }

    @GetMapping(value = "/status.json", produces = MediaType.APPLICATION_JSON_VALUE)
    @ResponseBody
    Mono<Map<String, Object>> json() {
        return Blocking.call(() -> {
            List<Map<String, Object>> items = disclosures.published().stream().map(StatusController::item).toList();
            Map<String, Object> out = new LinkedHashMap<>();
            out.put("disclosures", items);
            out.put("incidents", updates.incidents().stream().map(StatusController::incident).toList());
            return out;
        });
    }

    /** One entry of the feeds: a published disclosure version or a status update. */
    private record Entry(String id, String title, String link, java.time.Instant at, String text) {
    }

    /** What both feeds carry, newest first. */
    private List<Entry> entries() {
        List<Entry> out = new java.util.ArrayList<>();
        for (Disclosure d : disclosures.published()) {
            out.add(new Entry("disclosure-" + d.incidentId() + "-" + d.version(), d.title() + " (v" + d.version() + ")",
                    "/status", d.publishedAt(), d.body()));
        }
        for (PublicIncident p : updates.incidents()) {
            for (StatusUpdate u : p.updates()) {
                out.add(new Entry("status-update-" + u.id(), p.title() + " - " + u.state().label(),
                        "/status#incident-" + p.incidentId(), u.postedAt(), u.body()));
            }
        }
        out.sort(java.util.Comparator.comparing(Entry::at, java.util.Comparator.nullsLast(java.util.Comparator.reverseOrder())));
        return out;
    }

    @GetMapping("/status.rss")
    Mono<ResponseEntity<String>> rss() {
        return Blocking.call(() -> {
            StringBuilder sb = new StringBuilder("""
                    <?xml version="1.0" encoding="UTF-8"?>
                    <rss version="2.0"><channel><title>Pagewarden status</title><link>/status</link>
                    <description>Published incident disclosures</description>
                    """);
            for (Entry e : entries()) {
                sb.append("<item><title>").append(esc(e.title())).append("</title><link>").append(esc(e.link()))
                        .append("</link><guid isPermaLink=\"false\">").append(e.id()).append("</guid><pubDate>")
                        .append(rfc1123(e.at())).append("</pubDate><description>").append(esc(e.text()))
                        .append("</description></item>\n");
            }
            sb.append("</channel></rss>\n");
            return ResponseEntity.ok().contentType(MediaType.parseMediaType("application/rss+xml;charset=UTF-8"))
                    .body(sb.toString());
        });
    }

    /** The same entries as an Atom 1.0 feed (RFC 4287), links made absolute from the address it was asked at. */
    @GetMapping("/status.atom")
    Mono<ResponseEntity<String>> atom(org.springframework.web.server.ServerWebExchange exchange) {
        java.net.URI asked = exchange.getRequest().getURI();
        String base = asked.getScheme() + "://" + asked.getRawAuthority();
        return Blocking.call(() -> {
            List<Entry> entries = entries();
            java.time.Instant updated = entries.stream().map(Entry::at).filter(java.util.Objects::nonNull).findFirst()
                    .orElse(java.time.Instant.EPOCH);
            StringBuilder sb = new StringBuilder("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n")
                    .append("<feed xmlns=\"http://www.w3.org/2005/Atom\"><title>Pagewarden status</title>")
                    .append("<id>").append(esc(base + "/status")).append("</id>")
                    .append("<link rel=\"alternate\" href=\"").append(esc(base + "/status")).append("\"/>")
                    .append("<link rel=\"self\" href=\"").append(esc(base + "/status.atom")).append("\"/>")
                    .append("<updated>").append(updated).append("</updated><author><name>Pagewarden</name></author>\n");
            for (Entry e : entries) {
                sb.append("<entry><id>").append(esc(base + "/status#" + e.id())).append("</id><title>").append(esc(e.title()))
                        .append("</title><link href=\"").append(esc(base + e.link())).append("\"/><updated>")
                        .append(e.at() == null ? updated : e.at()).append("</updated><content type=\"text\">")
                        .append(esc(e.text())).append("</content></entry>\n");
            }
            sb.append("</feed>\n");
            return ResponseEntity.ok().contentType(MediaType.parseMediaType("application/atom+xml;charset=UTF-8"))
                    .body(sb.toString());
        });
    }

    private static String esc(String s) {
        return HtmlUtils.htmlEscape(s == null ? "" : s);
    }

    private static String rfc1123(java.time.Instant at) {
        return java.time.format.DateTimeFormatter.RFC_1123_DATE_TIME.format(at.atZone(java.time.ZoneOffset.UTC));
    }

    private static Map<String, Object> incident(PublicIncident p) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("incident", p.incidentId());
        m.put("title", p.title());
        m.put("state", p.state().label());
        m.put("updated_at", p.updatedAt());
        m.put("updates", p.updates().stream().map(u -> {
            Map<String, Object> x = new LinkedHashMap<>();
            x.put("state", u.state().label());
            x.put("title", u.title());
            x.put("posted_at", u.postedAt());
            x.put("text", u.body());
            return x;
        }).toList());
        return m;
    }

    private static Map<String, Object> item(Disclosure d) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("incident", d.incidentId());
        m.put("version", d.version());
        m.put("title", d.title());
        m.put("published_at", d.publishedAt());
        m.put("body_markdown", d.body());
        return m;
    }
}
