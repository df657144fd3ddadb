package dev.pagewarden.platform.notice;

import dev.pagewarden.incident.disclosure.DisclosureService.Notice;
import org.springframework.web.util.HtmlUtils;

import java.util.List;

/**
 * A tenant's notices as a readable HTML page: the same facts as the JSON, every value escaped; the disclosure
 * text is shown as written (Markdown reads as plain text). Styled by the platform's own stylesheet only, so
 * it passes the pages' Content-Security-Policy.
 */
final class NoticePage {
    private NoticePage() {
    }

    static String html(String tenant, List<Notice> notices) {
        StringBuilder sb = new StringBuilder("""
                <!DOCTYPE html>
                <html lang="en">
                <head>
                  <meta charset="utf-8">
                  <meta name="viewport" content="width=device-width, initial-scale=1">
                  <title>Incident notices - Pagewarden</title>
                  <link rel="stylesheet" href="/admin/assets/admin.css">
                </head>
                <body>
                <header class="top"><a class="skip" href="#content">Skip to content</a><span class="brand">Pagewarden</span>
                  <a href="/status">Status</a></header>
                <main id="content" tabindex="-1">
                """);
        sb.append("<h1>Incident notices for ").append(esc(tenant)).append("</h1>\n");
        if (notices.isEmpty()) {
            sb.append("<p class=\"muted\" id=\"no-notices\">No incident has affected this account.</p>\n");
        }
        for (Notice n : notices) {
            sb.append("<article class=\"card notice\" id=\"notice-").append(n.id()).append("\">\n<h2>").append(esc(n.title()))
                    .append("</h2>\n<p class=\"muted\">Incident ").append(n.incidentId()).append(", disclosure version ")
                    .append(n.version()).append(", published <time datetime=\"").append(n.publishedAt()).append("\">")
                    .append(n.publishedAt()).append("</time></p>\n<p>").append(esc(why(n.relation()))).append("</p>\n");
            ids(sb, "Your responses computed over another customer's data", "received", n, n.requests());
            ids(sb, "Your requests whose data another customer's request read", "exposed", n, n.exposedRequests());
            sb.append("<div class=\"text\">").append(esc(n.body())).append("</div>\n</article>\n");
        }
        return sb.append("</main>\n</body>\n</html>\n").toString();
    }

    /** What the relation means for the reader. */
    private static String why(String relation) {
        return switch (relation) {
            case "exposed" -> "Your account's data was read by another customer's requests.";
            case "received" -> "Your account received responses computed over another customer's data.";
            case "exposed+received" -> "Your account's data was read by another customer's requests, and your account"
                    + " received responses computed over another customer's data.";
            default -> "Your account was affected (" + relation + ").";
        };
    }

    /** The ids as the tenant holds them ({@code cmpl-...}), the platform's request number beside each. */
    private static void ids(StringBuilder sb, String label, String kind, Notice n, List<Long> ids) {
        if (ids.isEmpty()) {
            return;
        }
        sb.append("<h3>").append(label).append(" (").append(ids.size()).append(")</h3>\n<ul class=\"token ")
                .append(kind).append("\">");
        for (long id : ids) {
            String shown = n.responseIds().get(id);
            sb.append("<li>");
            if (shown != null) {
                sb.append("<code>").append(esc(shown)).append("</code> <span class=\"muted\">(request ").append(id).append(")</span>");
            } else {
                sb.append("request ").append(id);
            }
            sb.append("</li>");
        }
        sb.append("</ul>\n");
    }

    private static String esc(String s) {
        return s == null ? "" : HtmlUtils.htmlEscape(s);
    }
}
