package dev.pagewarden.adminui.disclosure;

import org.commonmark.parser.Parser;
import org.commonmark.renderer.html.HtmlRenderer;
import org.springframework.stereotype.Component;

/**
 * Disclosure Markdown to HTML for the status page and previews. Raw HTML in the text is escaped
 * and unsafe link targets (javascript: and the like) dropped, so a disclosure cannot inject script.
 * Controllers render it; templates insert the result unescaped.
 */
@Component
public class Markdown {
    private final Parser parser = Parser.builder().build();
    private final HtmlRenderer renderer = HtmlRenderer.builder().escapeHtml(true).sanitizeUrls(true).build();

    public String html(String markdown) {
        return markdown == null ? "" : renderer.render(parser.parse(markdown));
    }
}
