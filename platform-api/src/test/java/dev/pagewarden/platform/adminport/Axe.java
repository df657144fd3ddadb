package dev.pagewarden.platform.adminport;

import com.microsoft.playwright.Page;
import org.junit.jupiter.api.Assumptions;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * axe-core (npm, pinned in src/test/axe; {@code npm ci} there installs it) run inside a page the browser tests
 * visit: no serious or critical accessibility violation may remain. Without the npm folder installed the
 * browser test is skipped, except under CI=true, where that fails it.
 */
final class Axe {
    static final Path SCRIPT = Paths.get("src", "test", "axe", "node_modules", "axe-core", "axe.min.js");
    private final String source;

    private Axe(String source) {
        this.source = source;
    }

    /** axe-core; skips the calling test without it, except under CI=true, where that fails it. */
    static Axe require() throws IOException {
        if (!Files.isRegularFile(SCRIPT)) {
            String why = "no axe-core at " + SCRIPT.toAbsolutePath() + " (run: cd platform-api/src/test/axe && npm ci)";
            if ("true".equals(System.getenv("CI"))) {
                throw new AssertionError(why);
            }
            Assumptions.abort(why);
        }
        return new Axe(Files.readString(SCRIPT));
    }

    /**
     * Injects axe-core into the page (through the browser's debugging protocol: the pages' Content-Security-Policy
     * allows no inline script) and asserts that it finds no serious or critical violation.
     */
    void check(Page page, String name) {
        if (!Boolean.TRUE.equals(page.evaluate("() => typeof window.axe === 'object'"))) {
            page.evaluate(source);
        }
        @SuppressWarnings("unchecked")
        List<String> violations = (List<String>) page.evaluate("""
                async () => (await axe.run(document, {resultTypes: ['violations']})).violations
                    .filter(v => v.impact === 'serious' || v.impact === 'critical')
                    .map(v => v.impact + ' ' + v.id + ': ' + v.help + ' at '
                        + v.nodes.slice(0, 5).map(n => n.target.join(' ')).join(', '))""");
        assertThat(violations).as(name + " (" + page.url() + "): serious or critical accessibility violations").isEmpty();
    }
}
