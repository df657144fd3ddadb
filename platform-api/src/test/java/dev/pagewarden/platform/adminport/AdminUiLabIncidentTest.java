package dev.pagewarden.platform.adminport;

import com.sun.net.httpserver.HttpServer;
import dev.pagewarden.adminui.users.AdminRole;
import dev.pagewarden.adminui.users.AdminUserService;
import dev.pagewarden.db.audit.BlastRadius;
import dev.pagewarden.incident.disclosure.DisclosureService;
import dev.pagewarden.incident.disclosure.WebhookService;
import dev.pagewarden.incident.incident.Incident;
import dev.pagewarden.incident.incident.IncidentService;
import dev.pagewarden.platform.testing.PlatformTestBase;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.HttpMethod;
import org.springframework.http.MediaType;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.context.TestPropertySource;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

import static dev.pagewarden.platform.adminport.Await.until;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The issue's workflow end to end on a lab platform that re-creates the 2026 incident with the
 * detectors off (window 320 over a 192-token prefill pool): the replay exposes tenants; the lineage
 * sweep opens the incident; its blast radius (from PostgreSQL lineage) matches the replay's ground
 * truth; taking the model private makes the tenant API answer 503; a disclosure is drafted by a
 * responder, then reviewed and published by a publisher; /status shows it; exactly the affected tenants get a
 * notice (and a signed webhook, retried until delivered); an unaffected tenant gets none.
 */
@TestPropertySource(properties = {"pagewarden.lab.enabled=true",
        "pagewarden.lab.faults=skip-capacity-check,legacy-finished-check,detectors-off",
        "pagewarden.engine.context-window=320", "pagewarden.engine.prefill-pool-tokens=192",
        "pagewarden.engine.decode-pool-tokens=1024", "pagewarden.admin.webhook-backoff=100ms",
        "pagewarden.admin.lineage-sweep=0s",
        // the test's webhook receiver listens on plain http on loopback
        "pagewarden.webhooks.allow-http=true", "pagewarden.webhooks.allow-private-addresses=true"})
class AdminUiLabIncidentTest extends PlatformTestBase {
    private static final Path HOME = tempHome();
    static final String PASSWORD = "correct-horse-battery";

    @Autowired
    AdminUserService users;
    @Autowired
    IncidentService incidents;
    @Autowired
    DisclosureService disclosures;
    @Autowired
    JdbcClient jdbc;

    @DynamicPropertySource
    static void home(DynamicPropertyRegistry registry) {
        registry.add("pagewarden.home", HOME::toString);
    }

    @Test
    @SuppressWarnings("unchecked")
    void replayIncidentBlastRadiusTakeDownDisclosureAndNotices() throws Exception {
        users.create("responder1", PASSWORD, AdminRole.RESPONDER, "test");
        users.create("publisher1", PASSWORD, AdminRole.PUBLISHER, "test");
        UiSession responder = new UiSession(baseUrl()).login("responder1", PASSWORD);
        String bystanderKey = newTenant("bystander")[1];

        // overview flags the misconfiguration: prefill capacity 192 < window 320
        String overview = responder.get("/admin/overview/panel").getResponseBody();
        assertThat(overview).contains("capacity-too-small").contains("prefill");

        // the replay through the running platform, from the admin API on the responder's session
        Map<String, Object> out = responder.api(HttpMethod.POST, "/admin/api/lab/replay").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("scenario", "incident-2026-undetected")).exchange().expectStatus().isOk()
                .expectBody(Map.class).returnResult().getResponseBody();
        Map<String, Object> truth = (Map<String, Object>) out.get("ground_truth");
        List<Number> readerIds = (List<Number>) truth.get("cross_tenant_reader_ids");
        assertThat(readerIds).as("the 2026 fault really exposed someone").isNotEmpty();
        List<Number> filed = (List<Number>) out.get("incidents_filed_by_lineage_sweep");
        assertThat(filed).hasSize(1);
        long id = filed.getFirst().longValue();

        // the blast radius from lineage equals the ground truth
        Incident incident = incidents.get(id);
        BlastRadius radius = incidents.blastRadius(incident);
        assertThat(radius.responses().stream().map(BlastRadius.AffectedResponse::readerRequest).collect(Collectors.toSet()))
                .isEqualTo(readerIds.stream().map(Number::longValue).collect(Collectors.toSet()));
        assertThat(radius.readerTenants()).isEqualTo(new HashSet<>((List<String>) truth.get("reader_tenants")));
        assertThat(radius.exposedTenants()).isEqualTo(new HashSet<>((List<String>) truth.get("exposed_tenants")));
        String page = responder.get("/admin/incidents/" + id).getResponseBody();
        assertThat(page).contains("id=\"affected\">" + readerIds.size() + "<");
        assertThat(page).contains("lineage-exposure");

        // take the model down: the tenant API answers 503 for it
        Map<String, String> labTenants = (Map<String, String>) truth.get("tenants");
        String affectedTenant = radius.readerTenants().iterator().next();
        String affectedKey = issueKey(affectedTenant);
        responder.post("/admin/incidents/" + id + "/model-private");
        as(affectedKey).post().uri("/v1/completions").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("model", MODEL, "prompt", "Once", "max_tokens", 2)).exchange()
                .expectStatus().isEqualTo(503).expectBody().jsonPath("$.error.code").isEqualTo("model_unavailable");
        assertThat(incidents.timeline(id)).extracting(Incident.Entry::text).anyMatch(t -> t.contains("made private"));

        // the affected tenant registers a webhook whose first delivery fails, then succeeds
        List<String[]> received = new CopyOnWriteArrayList<>();
        AtomicInteger calls = new AtomicInteger();
        HttpServer hook = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        hook.createContext("/hook", ex -> {
            String body = new String(ex.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
            int status = calls.incrementAndGet() == 1 ? 500 : 200;
            if (status == 200) {
                received.add(new String[]{ex.getRequestHeaders().getFirst(WebhookService.SIGNATURE_HEADER), body});
            }
            ex.sendResponseHeaders(status, -1);
            ex.close();
        });
        hook.start();
        try {
            Map<?, ?> reg = as(affectedKey).put().uri("/v1/webhook").contentType(MediaType.APPLICATION_JSON)
                    .bodyValue(Map.of("url", "http://127.0.0.1:" + hook.getAddress().getPort() + "/hook")).exchange()
                    .expectStatus().isOk().expectBody(Map.class).returnResult().getResponseBody();
            String secret = (String) reg.get("secret");
            as(affectedKey).put().uri("/v1/webhook").contentType(MediaType.APPLICATION_JSON)
                    .bodyValue(Map.of("url", "ftp://nope")).exchange().expectStatus().isBadRequest();
            // re-registering replaced nothing: the bad URL was refused, so the secret above still holds

            // draft (pre-filled from lineage), review, and a responder cannot publish
            var draft = responder.post("/admin/incidents/" + id + "/disclosure");
            String draftPath = UiSession.location(draft);
            long disclosureId = Long.parseLong(draftPath.substring(draftPath.lastIndexOf('/') + 1));
            assertThat(disclosures.get(disclosureId).body()).contains("another customer's KV data: **" + readerIds.size() + "**");
            responder.get(draftPath);
            responder.post(draftPath, "title", "KV-cache isolation incident", "body",
                    disclosures.get(disclosureId).body().replace("_Describe the root cause._", "Capacity check skipped.")
                            .replace("_Describe the fix and how it was verified._", "Capacity check restored.")
                            + "\n<script>alert(1)</script> [x](javascript:alert)\n");
            responder.get(draftPath);
            responder.post(draftPath + "/review");
            assertThat(responder.post(draftPath + "/publish").getStatus().value()).isEqualTo(403);
            // four eyes: the publisher, who wrote none of it, reviews it and publishes
            UiSession publisher = new UiSession(baseUrl()).login("publisher1", PASSWORD);
            publisher.get(draftPath);
            assertThat(publisher.post(draftPath + "/approve").getStatus().is3xxRedirection()).isTrue();
            Set<String> toNotify = new HashSet<>(radius.readerTenants());
            toNotify.addAll(radius.exposedTenants());
            assertThat(publisher.get(draftPath + "/publish").getResponseBody()).as("the confirmation names what publishing does")
                    .contains("Publish: notify " + toNotify.size() + (toNotify.size() == 1 ? " tenant" : " tenants") + " and post to /status");
            assertThat(publisher.post(draftPath + "/publish").getStatus().is3xxRedirection()).isTrue();

            // public status page, JSON and RSS, no login
            UiSession anon = new UiSession(baseUrl());
            assertThat(anon.get("/status").getResponseBody()).contains("KV-cache isolation incident").contains("Capacity check skipped.")
                    .contains("<h2>Cause</h2>");
            assertThat(anon.get("/status").getResponseBody()).as("Markdown cannot inject script")
                    .doesNotContain("<script>alert").doesNotContain("href=\"javascript:");
            assertThat(anon.get("/status.json").getResponseBody()).contains("KV-cache isolation incident");
            assertThat(anon.get("/status.rss").getResponseBody()).contains("<title>KV-cache isolation incident (v1)</title>");

            // notices: exactly the affected tenants
            Set<String> expected = new HashSet<>(radius.readerTenants());
            expected.addAll(radius.exposedTenants());
            assertThat(jdbc.sql("SELECT tenant_id FROM tenant_notices WHERE disclosure_id = :d").param("d", disclosureId)
                    .query(String.class).set()).isEqualTo(expected);
            Map<?, ?> notices = as(affectedKey).get().uri("/v1/notices").exchange().expectStatus().isOk()
                    .expectBody(Map.class).returnResult().getResponseBody();
            List<Map<String, Object>> data = (List<Map<String, Object>>) notices.get("data");
            assertThat(data).hasSize(1);
            assertThat(data.getFirst().get("title")).isEqualTo("KV-cache isolation incident");
            assertThat((List<Number>) data.getFirst().get("affected_request_ids")).isNotEmpty()
                    .allMatch(x -> readerIds.stream().anyMatch(r -> r.longValue() == x.longValue()));
            as(bystanderKey).get().uri("/v1/notices").exchange().expectStatus().isOk()
                    .expectBody().jsonPath("$.data.length()").isEqualTo(0);

            // the webhook: retried after a 500, signed with the tenant's secret
            until(() -> !received.isEmpty(), "the webhook delivery");
            assertThat(received.getFirst()[0]).isEqualTo("sha256=" + WebhookService.sign(secret, received.getFirst()[1]));
            assertThat(received.getFirst()[1]).contains("\"tenant_id\":\"" + affectedTenant + "\"");
            until(() -> "DELIVERED".equals(jdbc.sql("SELECT w.status FROM webhook_deliveries w JOIN tenant_notices n "
                    + "ON n.id = w.notice_id WHERE n.disclosure_id = :d AND n.tenant_id = :t").param("d", disclosureId)
                    .param("t", affectedTenant).query(String.class).optional().orElse(null)), "delivery status DELIVERED");
            assertThat(publisher.get(draftPath).getResponseBody()).contains("DELIVERED");
            assertThat(calls.get()).isEqualTo(2);

            // published is immutable; a correction is a new version
            assertThat(responder.post(draftPath, "title", "x", "body", "y").getStatus().value()).isEqualTo(400);
            assertThatThrownBy(() -> jdbc.sql("UPDATE disclosures SET body = 'tampered' WHERE id = :d")
                    .param("d", disclosureId).update()).hasMessageContaining("immutable");
            String correction = UiSession.location(responder.post("/admin/incidents/" + id + "/disclosure"));
            assertThat(correction).isNotEqualTo(draftPath);
            assertThat(disclosures.versions(id)).extracting(d -> d.version()).containsExactly(2, 1);
        } finally {
            hook.stop(0);
        }

        // restore is an admin's call (a responder may only take the model down): then the tenant API serves it again
        responder.get("/admin/incidents/" + id);
        assertThat(responder.post("/admin/incidents/" + id + "/model-public").getStatus().value()).isEqualTo(403);
        users.create("admin1", PASSWORD, AdminRole.ADMIN, "test");
        UiSession admin = new UiSession(baseUrl()).login("admin1", PASSWORD);
        admin.get("/admin/incidents/" + id);
        admin.post("/admin/incidents/" + id + "/model-public");
        as(affectedKey).post().uri("/v1/completions").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("model", MODEL, "prompt", "Once", "max_tokens", 2)).exchange().expectStatus().isOk();
        assertThat(labTenants).containsValue(affectedTenant);
    }

    private String issueKey(String tenantId) {
        Map<?, ?> key = admin().post().uri("/admin/api/tenants/" + tenantId + "/keys").exchange().expectStatus().isCreated()
                .expectBody(Map.class).returnResult().getResponseBody();
        return (String) key.get("key");
    }
}
