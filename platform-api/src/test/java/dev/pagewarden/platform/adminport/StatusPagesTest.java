package dev.pagewarden.platform.adminport;

import dev.pagewarden.adminui.users.AdminRole;
import org.junit.jupiter.api.Test;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.EntityExchangeResult;

import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The public status page and its feeds with incidents' status updates posted from the disclosure page; the
 * tenant's notices as a page beside the unchanged JSON; the admin error page for unknown URLs and refusals.
 */
class StatusPagesTest extends AdminUiTest {
    StatusPagesTest() {
        super("st-");
    }

    private long draftDisclosure(UiSession s, long incident) {
        EntityExchangeResult<String> r = s.post("/admin/incidents/" + incident + "/disclosure");
        assertThat(r.getStatus().value()).isEqualTo(303);
        String location = r.getResponseHeaders().getLocation().toString();
        return Long.parseLong(location.substring(location.lastIndexOf('/') + 1));
    }

    @Test
    void statusUpdatesAppearNewestFirstOnThePageAndInTheFeeds() {
        UiSession publisher = as(AdminRole.PUBLISHER);
        long incident = incident();
        long disclosure = draftDisclosure(publisher, incident);
        String page = "/admin/disclosures/" + disclosure;
        assertThat(publisher.get(page).getResponseBody()).contains("id=\"status-update-form\"")
                .contains("Not on the status page yet.");

        assertThat(publisher.post(page + "/status-update", "state", "investigating", "title", "Errors on glm",
                "text", "We are looking into errors.").getStatus().value()).isEqualTo(303);
        assertThat(publisher.post(page + "/status-update", "state", "identified", "title", "KV isolation fault <b>",
                "text", "Cause found: a pool too small.").getStatus().value()).isEqualTo(303);

        String status = publisher.get("/status").getResponseBody();
        assertThat(status).contains("lang=\"en\"").contains("id=\"incident-" + incident + "\"")
                .contains("KV isolation fault &lt;b&gt;");
        assertThat(status.indexOf("Cause found")).as("newest update first").isLessThan(status.indexOf("We are looking"));

        Map<String, Object> json = admin().get().uri("/status.json").exchange().expectStatus().isOk()
                .expectBody(new org.springframework.core.ParameterizedTypeReference<Map<String, Object>>() { })
                .returnResult().getResponseBody();
        assertThat(json).containsKeys("disclosures", "incidents");
        Map<?, ?> mine = ((List<?>) json.get("incidents")).stream().map(Map.class::cast)
                .filter(m -> ((Number) m.get("incident")).longValue() == incident).findFirst().orElseThrow();
        assertThat(mine.get("state")).isEqualTo("identified");
        assertThat(mine.get("title")).isEqualTo("KV isolation fault <b>");
        assertThat(((List<?>) mine.get("updates")).stream().map(u -> String.valueOf(((Map<?, ?>) u).get("state"))).toList())
                .containsExactly("identified", "investigating");

        String rss = admin().get().uri("/status.rss").exchange().expectStatus().isOk().expectBody(String.class)
                .returnResult().getResponseBody();
        assertThat(rss).contains("<title>KV isolation fault &lt;b&gt; - identified</title>")
                .contains("<link>/status#incident-" + incident + "</link>").contains("Cause found: a pool too small.");

        // the same entries as Atom, read by an XML parser: well-formed, newest first, absolute links
        byte[] atom = admin().get().uri("/status.atom").exchange().expectStatus().isOk()
                .expectHeader().contentTypeCompatibleWith("application/atom+xml").expectBody().returnResult().getResponseBody();
        org.w3c.dom.Document feed = parseXml(atom);
        org.w3c.dom.NodeList entries = feed.getElementsByTagNameNS("http://www.w3.org/2005/Atom", "entry");
        assertThat(entries.getLength()).isGreaterThanOrEqualTo(2);
        org.w3c.dom.Element newest = (org.w3c.dom.Element) entries.item(0);
        assertThat(newest.getElementsByTagNameNS("http://www.w3.org/2005/Atom", "title").item(0).getTextContent())
                .isEqualTo("KV isolation fault <b> - identified");
        assertThat(((org.w3c.dom.Element) newest.getElementsByTagNameNS("http://www.w3.org/2005/Atom", "link").item(0))
                .getAttribute("href")).matches("http://[^/]+/status#incident-" + incident);
        assertThat(newest.getElementsByTagNameNS("http://www.w3.org/2005/Atom", "updated").item(0).getTextContent())
                .matches("\\d{4}-\\d{2}-\\d{2}T.*Z");

        // the lifecycle does not go back: refused on the error page, with the navigation
        EntityExchangeResult<String> back = publisher.postPage(page + "/status-update", "state", "investigating",
                "title", "t", "text", "again");
        assertThat(back.getStatus().value()).isEqualTo(400);
        assertThat(back.getResponseBody()).contains("is identified on the status page and cannot go back to investigating")
                .contains("id=\"logout\"").contains("href=\"/admin/incidents\"");
        assertThat(publisher.get(page).getResponseBody()).contains("Cause found: a pool too small.");
    }

    @Test
    void aResponderMayNotPostToTheStatusPageAndIsToldSoOnAPage() {
        long disclosure = draftDisclosure(as(AdminRole.PUBLISHER), incident());
        UiSession responder = as(AdminRole.RESPONDER);
        assertThat(responder.get("/admin/disclosures/" + disclosure).getResponseBody()).doesNotContain("status-update-form");
        EntityExchangeResult<String> refused = responder.postPage("/admin/disclosures/" + disclosure + "/status-update",
                "state", "investigating", "title", "t", "text", "x");
        assertThat(refused.getStatus().value()).isEqualTo(403);
        assertThat(refused.getResponseHeaders().getContentType().isCompatibleWith(MediaType.TEXT_HTML)).isTrue();
        assertThat(refused.getResponseBody()).contains("Your role does not allow this.").contains("id=\"logout\"")
                .contains("lang=\"en\"");
        // without asking for a page, the refusal is as before
        assertThat(responder.post("/admin/disclosures/" + disclosure + "/status-update", "state", "investigating",
                "title", "t", "text", "x").getStatus().value()).isEqualTo(403);
    }

    @Test
    void anUnknownAdminUrlAnswersTheErrorPageWithTheNavigationNotWhitelabel() {
        UiSession viewer = as(AdminRole.VIEWER);
        EntityExchangeResult<String> page = viewer.getPage("/admin/no-such-page");
        assertThat(page.getStatus().value()).isEqualTo(404);
        assertThat(page.getResponseBody()).contains("There is no page at /admin/no-such-page.")
                .contains("href=\"/admin/disclosures\"").contains("id=\"logout\"").contains("Skip to content")
                .doesNotContain("Whitelabel");
        // a client that does not ask for HTML keeps the JSON error
        EntityExchangeResult<String> json = viewer.get("/admin/no-such-page");
        assertThat(json.getStatus().value()).isEqualTo(404);
        assertThat(json.getResponseBody()).contains("\"error\"").contains("Unknown path GET /admin/no-such-page");
    }

    @Test
    void noticesReadAsAPageForHtmlClientsWhileTheJsonStaysAsItWas() {
        String[] tenant = newTenant("st-notice");
        long incident = incident();
        long disclosure = jdbc.sql("""
                INSERT INTO disclosures (incident_id, version, status, title, body, created_at, created_by, reviewed_by,
                                         published_at, published_by)
                VALUES (:i, 1, 'PUBLISHED', 'Isolation fault <script>', 'Rotate **secrets**.', now(), 'a', 'b', now(), 'b')
                RETURNING id""").param("i", incident).query(Long.class).single();
        jdbc.sql("INSERT INTO tenant_notices (disclosure_id, tenant_id, created_at, relation) VALUES (:d, :t, now(), 'exposed')")
                .param("d", disclosure).param("t", tenant[0]).update();

        EntityExchangeResult<String> page = as(tenant[1]).get().uri("/v1/notices")
                .accept(MediaType.TEXT_HTML, MediaType.APPLICATION_XHTML_XML, MediaType.ALL).exchange()
                .expectStatus().isOk().expectBody(String.class).returnResult();
        assertThat(page.getResponseHeaders().getContentType().isCompatibleWith(MediaType.TEXT_HTML)).isTrue();
        assertThat(page.getResponseBody()).contains("<html lang=\"en\">").contains("Isolation fault &lt;script&gt;")
                .doesNotContain("<script>").contains("Your account&#39;s data was read by another customer&#39;s requests.")
                .contains("Rotate **secrets**.").contains("Incident " + incident + ", disclosure version 1");

        byte[] plain = as(tenant[1]).get().uri("/v1/notices").exchange().expectStatus().isOk()
                .expectHeader().contentType(MediaType.APPLICATION_JSON).expectBody().returnResult().getResponseBody();
        for (MediaType accept : List.of(MediaType.ALL, MediaType.APPLICATION_JSON)) {
            byte[] asked = as(tenant[1]).get().uri("/v1/notices").accept(accept).exchange().expectStatus().isOk()
                    .expectHeader().contentType(MediaType.APPLICATION_JSON).expectBody().returnResult().getResponseBody();
            assertThat(asked).as("JSON for Accept " + accept).isEqualTo(plain);
        }
        assertThat(new String(plain, java.nio.charset.StandardCharsets.UTF_8)).startsWith("{\"object\":\"list\",\"data\":[{\"id\":")
                .contains("\"title\":\"Isolation fault <script>\"").contains("\"relation\":\"exposed\"");
    }

    private static org.w3c.dom.Document parseXml(byte[] xml) {
        try {
            javax.xml.parsers.DocumentBuilderFactory f = javax.xml.parsers.DocumentBuilderFactory.newInstance();
            f.setNamespaceAware(true);
            f.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
            return f.newDocumentBuilder().parse(new java.io.ByteArrayInputStream(xml));
        } catch (Exception e) {
            throw new AssertionError("not well-formed XML: " + e.getMessage(), e);
        }
    }
}
