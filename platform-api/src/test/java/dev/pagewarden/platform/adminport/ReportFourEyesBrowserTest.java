package dev.pagewarden.platform.adminport;

import com.microsoft.playwright.Browser;
import com.microsoft.playwright.BrowserContext;
import com.microsoft.playwright.BrowserType;
import com.microsoft.playwright.Page;
import com.microsoft.playwright.Playwright;
import com.microsoft.playwright.Response;
import dev.pagewarden.adminui.users.AdminRole;
import dev.pagewarden.adminui.users.AdminUserService;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static dev.pagewarden.platform.adminport.AdminUiBrowserTest.CHROMIUM;
import static dev.pagewarden.platform.adminport.AdminUiBrowserTest.requireChromium;
import static dev.pagewarden.platform.adminport.AdminUiBrowserTest.SHOTS;
import static dev.pagewarden.platform.adminport.AdminUiBrowserTest.shot;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * An outside report and a four-eyes disclosure in a real headless Chromium: a researcher sends the
 * public form (the page's script solves the proof of work) and gets a token; the report appears as a
 * REPORTED incident with the reporter's contact; the responder who drafts the disclosure can neither
 * publish it (409) nor review it (403), the page saying why; a second user reviews it; the drafter then
 * publishes; the reporter's status page follows the incident from received to closed. Without a
 * Chromium the test is skipped, except under CI=true, where it fails.
 */
class ReportFourEyesBrowserTest extends ReportPlatformTest {
    @Autowired
    AdminUserService users;

    @Test
    void reportThenFourEyesPublishInARealBrowser() throws Exception {
        requireChromium();
        users.create("bt-drafter", PASSWORD, AdminRole.PUBLISHER, "test");
        users.create("bt-reviewer", PASSWORD, AdminRole.RESPONDER, "test");
        List<String> consoleErrors = new ArrayList<>();
        try (Playwright playwright = Playwright.create(new Playwright.CreateOptions()
                .setEnv(Map.of("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")));
             Browser browser = playwright.chromium().launch(new BrowserType.LaunchOptions()
                     .setExecutablePath(CHROMIUM).setHeadless(true).setArgs(List.of("--no-sandbox")))) {
            // the researcher: no account, the form, the proof of work solved by the page
            Page reporter = page(browser, consoleErrors);
            reporter.navigate(baseUrl() + "/report");
            shot(reporter, "20-report-form");
            reporter.fill("#contact", "researcher@example.org");
            reporter.fill("#description", "My completion showed text from another company's prompt.\n<b>not bold</b>");
            reporter.fill("#request_ids", "cmpl-1234");
            reporter.click("#send-report");
            reporter.waitForSelector("#report-token");
            String token = reporter.textContent("#report-token").strip();
            assertThat(token).matches("pwr_[A-Za-z0-9_-]{43}");
            assertThat(reporter.textContent("#report-status")).isEqualTo("received");
            shot(reporter, "21-report-received");
            String statusUrl = baseUrl() + "/report/" + token;

            // the drafter: the REPORTED incident with the reporter's contact and text
            Page drafter = login(browser, consoleErrors, "bt-drafter");
            drafter.navigate(baseUrl() + "/admin/incidents");
            drafter.locator("tr:has(.badge.reported) a").first().click();
            drafter.waitForSelector("#report-contact");
            String incidentUrl = drafter.url();
            assertThat(drafter.textContent("#status")).isEqualTo("reported");
            assertThat(drafter.textContent("#report-contact")).isEqualTo("researcher@example.org");
            assertThat(drafter.textContent("#report-description")).contains("<b>not bold</b>");
            shot(drafter, "22-reported-incident");
            drafter.click("#to-investigating");
            drafter.waitForSelector("#status:text-is('investigating')");
            assertThat(reporterStatus(reporter, statusUrl)).isEqualTo("under investigation");

            // the drafter writes the disclosure and can neither publish nor review it alone
            drafter.click("#draft-disclosure");
            drafter.waitForSelector("#body");
            drafter.fill("input[name=title]", "Outside report: no cross-tenant exposure");
            drafter.fill("#body", "We checked the request lineage for the reported window and found no exposure.");
            drafter.click("#save");
            Response refused = drafter.waitForResponse(r -> r.url().contains("/publish"), () -> drafter.click("#publish"));
            assertThat(refused.status()).isEqualTo(409);
            assertThat(drafter.textContent("#disclosure-error")).contains("four eyes").contains("bt-drafter");
            shot(drafter, "23-four-eyes-refused");
            drafter.waitForSelector("#disclosure-error");
            String disclosureUrl = drafter.url().replaceAll("/(approve|publish)(\\?.*)?$", "");
            drafter.navigate(disclosureUrl);
            assertThat(drafter.locator("#approve").count()).as("no Approve for the author").isZero();
            assertThat(drafter.textContent("#waiting-review")).contains("waiting for another reviewer");

            // a second user reviews it
            Page reviewer = login(browser, consoleErrors, "bt-reviewer");
            reviewer.navigate(disclosureUrl);
            reviewer.click("#approve");
            reviewer.waitForSelector("#reviews td:text-is('bt-reviewer')");
            assertThat(reviewer.locator("#publish").count()).as("a responder cannot publish").isZero();
            shot(reviewer, "24-reviewed");

            // the drafter publishes; resolving the incident closes the report
            drafter.navigate(disclosureUrl);
            drafter.click("#publish");
            assertThat(drafter.textContent("#publish-summary")).startsWith("Publish: notify ").endsWith(" and post to /status");
            drafter.click("#confirm-publish");
            drafter.waitForSelector("#disclosure-status:text-is('published')");
            shot(drafter, "25-published");
            drafter.navigate(incidentUrl);
            drafter.click("#to-resolved");
            assertThat(drafter.textContent("#confirm-what")).contains("leaves the open incidents");
            drafter.click("#confirm-action");
            drafter.waitForSelector("#status:text-is('resolved')");
            assertThat(reporterStatus(reporter, statusUrl)).isEqualTo("closed");
            shot(reporter, "26-report-closed");
        }
        assertThat(consoleErrors).as("console errors").isEmpty();
    }

    private static Page page(Browser browser, List<String> consoleErrors) {
        BrowserContext context = browser.newContext(new Browser.NewContextOptions().setViewportSize(1366, 768));
        Page page = context.newPage();
        page.onConsoleMessage(m -> {
            // the refusals (403, 409) are expected answers, logged by Chromium as failed resources
            if ("error".equals(m.type()) && !m.text().contains("status of 403") && !m.text().contains("status of 409")) {
                consoleErrors.add(page.url() + ": " + m.text());
            }
        });
        page.onPageError(e -> consoleErrors.add(page.url() + ": " + e));
        return page;
    }

    /** A user's own browser context (cookies), logged in. */
    private Page login(Browser browser, List<String> consoleErrors, String user) {
        Page page = page(browser, consoleErrors);
        page.navigate(baseUrl() + "/admin/login");
        page.fill("#username", user);
        page.fill("#password", PASSWORD);
        page.click("#login");
        page.waitForURL(baseUrl() + "/admin");
        return page;
    }

    private static String reporterStatus(Page reporter, String url) {
        reporter.navigate(url);
        return reporter.textContent("#report-status").strip();
    }
}
