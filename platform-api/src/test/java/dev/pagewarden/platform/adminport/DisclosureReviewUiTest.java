package dev.pagewarden.platform.adminport;

import dev.pagewarden.adminui.users.AdminRole;
import dev.pagewarden.incident.disclosure.DisclosureService;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.test.web.reactive.server.EntityExchangeResult;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The disclosure pages for a reviewer: the draft's Markdown previewed (escaped), the template's placeholders named
 * and refused at approve and publish, a confirmation that says what publishing does before it happens, the review
 * queue without one's own drafts, no Approve button for an author, and the diff of a correction against the
 * published version.
 */
class DisclosureReviewUiTest extends AdminUiTest {
    private static final String ROOT_CAUSE = "_Describe the root cause._";
    private static final String FIX = "_Describe the fix and how it was verified._";

    @Autowired
    DisclosureService disclosures;

    DisclosureReviewUiTest() {
        super("dr-");
    }

    private static int status(EntityExchangeResult<?> r) {
        return r.getStatus().value();
    }

    /** The review queue's table on the disclosures page. */
    private static String queue(UiSession s) {
        String page = s.get("/admin/disclosures").getResponseBody();
        int start = page.indexOf("id=\"review-queue\"");
        assertThat(start).as("the review queue").isNotNegative();
        return page.substring(start, page.indexOf("</table>", start));
    }

    @Test
    void previewPlaceholdersConfirmationQueueAndDiff() {
        UiSession author = as(AdminRole.RESPONDER);
        UiSession reviewer = as(AdminRole.PUBLISHER);
        long incident = incident();
        author.get("/admin/incidents/" + incident);
        String path = UiSession.location(author.post("/admin/incidents/" + incident + "/disclosure"));
        long id = Long.parseLong(path.substring(path.lastIndexOf('/') + 1));
        String prefilled = disclosures.get(id).body();

        // the preview renders the saved Markdown beside the editor, raw HTML escaped; placeholders are listed
        author.get(path);
        assertThat(status(author.post(path, "title", "Cross-tenant read", "body", prefilled + "\n<script>alert(1)</script>\n")))
                .isEqualTo(303);
        String page = author.get(path).getResponseBody();
        String preview = page.substring(page.indexOf("id=\"preview\""));
        assertThat(preview).contains("<h2>Cause</h2>").contains("&lt;script&gt;alert(1)&lt;/script&gt;")
                .doesNotContain("<script>alert");
        assertThat(page).contains("id=\"placeholders\"").contains("<code>" + ROOT_CAUSE + "</code>").contains("<code>" + FIX + "</code>");
        author.post(path + "/review");

        // the author is told it waits for someone else, and offered no Approve; the queue is someone else's
        page = author.get(path).getResponseBody();
        assertThat(page).doesNotContain("id=\"approve\"").contains("id=\"waiting-review\"").contains("waiting for another reviewer");
        assertThat(queue(author)).doesNotContain("/admin/disclosures/" + id + "\"");
        assertThat(queue(reviewer)).contains("/admin/disclosures/" + id + "\"");
        assertThat(reviewer.get(path).getResponseBody()).contains("id=\"approve\"").doesNotContain("id=\"waiting-review\"");

        // placeholders left: approve, the publish confirmation and publish are refused, naming each one
        EntityExchangeResult<String> approve = reviewer.post(path + "/approve");
        assertThat(status(approve)).isEqualTo(409);
        assertThat(approve.getResponseBody()).contains("id=\"disclosure-error\"").contains("cannot be approved")
                .contains(ROOT_CAUSE).contains(FIX);
        // not approvable, so not publishable: no confirmation is offered, and a publish is refused
        EntityExchangeResult<String> confirm = reviewer.get(path + "/publish");
        assertThat(status(confirm)).isEqualTo(409);
        assertThat(confirm.getResponseBody()).contains("id=\"disclosure-error\"").doesNotContain("id=\"confirm-publish\"");
        reviewer.get(path);
        assertThat(status(reviewer.post(path + "/publish"))).isEqualTo(409);
        assertThat(disclosures.get(id).publishedAt()).isNull();

        // filled in, reviewed by the other person: the confirmation says what publishing does, and nothing is yet published
        author.get(path);
        author.post(path, "title", "Cross-tenant read", "body", prefilled.replace(ROOT_CAUSE, "A skipped capacity check.")
                .replace(FIX, "The check runs again."));
        author.post(path + "/review");
        reviewer.get(path);
        assertThat(status(reviewer.post(path + "/approve"))).isEqualTo(303);
        assertThat(queue(reviewer)).as("approved: no longer waiting").doesNotContain("/admin/disclosures/" + id + "\"");
        confirm = reviewer.get(path + "/publish");
        assertThat(status(confirm)).isEqualTo(200);
        assertThat(confirm.getResponseBody()).contains("id=\"publish-summary\">Publish: notify 0 tenants and post to /status<")
                .contains("id=\"confirm-publish\"");
        assertThat(disclosures.get(id).publishedAt()).as("the confirmation publishes nothing").isNull();
        assertThat(status(reviewer.post(path + "/publish"))).isEqualTo(303);
        assertThat(disclosures.get(id).publishedAt()).isNotNull();

        // a correction shows what changed from the published version, marked with signs and ins/del
        author.get(path);
        String correction = UiSession.location(author.post("/admin/incidents/" + incident + "/disclosure"));
        page = author.get(correction).getResponseBody();
        assertThat(page).contains("id=\"diff\"").contains("<ins>+ **Correction (version 2):** describe what changed.</ins>")
                .contains("<span>  ## Cause</span>").doesNotContain("<del>");
    }
}
