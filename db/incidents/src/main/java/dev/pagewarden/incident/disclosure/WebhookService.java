package dev.pagewarden.incident.disclosure;

import dev.pagewarden.incident.AdminProperties;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Service;
import tools.jackson.databind.json.JsonMapper;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.sql.Timestamp;
import java.time.Clock;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * Tenant webhooks: a tenant registers an HTTPS URL (plain HTTP and private addresses only where the
 * operator allows them, see {@link WebhookTargets}) and gets a per-tenant secret once. Each notice is POSTed as JSON with {@code X-Pagewarden-Signature:
 * sha256=<hex HMAC-SHA256 of the body with the secret>}; non-2xx or no answer is retried with
 * doubling back-off up to {@code pagewarden.admin.webhook-attempts}; a refused target or a redirect
 * fails at once. Each delivery's status is kept. Sending goes through {@link WebhookClient}.
 */
@Service
public class WebhookService implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(WebhookService.class);
    public static final String SIGNATURE_HEADER = "X-Pagewarden-Signature";

    private final JdbcClient jdbc;
    private final AdminProperties properties;
    private final Clock clock;
    private final WebhookProperties webhooks;
    private final WebhookClient client;
    private final JsonMapper json;
    private final ExecutorService senders = Executors.newVirtualThreadPerTaskExecutor();

    WebhookService(JdbcClient jdbc, AdminProperties properties, WebhookProperties webhooks, WebhookClient client,
                   JsonMapper json, Clock clock) {
        this.jdbc = jdbc;
        this.properties = properties;
        this.webhooks = webhooks;
        this.client = client;
        this.json = json;
        this.clock = clock;
    }

    /** Registers (or replaces) the tenant's webhook; returns the new signing secret, shown once. */
    public String register(String tenantId, String url) {
        URI uri = WebhookTargets.checkUrl(url, webhooks.allowHttp(), webhooks.allowPrivateAddresses());
        byte[] random = new byte[32];
        new SecureRandom().nextBytes(random);
        String secret = "whsec_" + HexFormat.of().formatHex(random);
        jdbc.sql("""
                INSERT INTO tenant_webhooks (tenant_id, url, secret, updated_at) VALUES (:t, :u, :s, :now)
                ON CONFLICT (tenant_id) DO UPDATE SET url = :u, secret = :s, updated_at = :now""")
                .param("t", tenantId).param("u", uri.toString()).param("s", secret)
                .param("now", Timestamp.from(clock.instant())).update();
        return secret;
    }

    public Optional<String> url(String tenantId) {
        return jdbc.sql("SELECT url FROM tenant_webhooks WHERE tenant_id = :t").param("t", tenantId).query(String.class)
                .optional();
    }

    public void unregister(String tenantId) {
        jdbc.sql("DELETE FROM tenant_webhooks WHERE tenant_id = :t").param("t", tenantId).update();
    }

    /** Queues one delivery per notice of the disclosure whose tenant has a webhook. */
    void deliverAll(long disclosureId) {
        List<Map<String, Object>> rows = jdbc.sql("""
                SELECT n.id AS notice, w.url, w.secret, n.tenant_id, n.relation, d.incident_id, d.version, d.title, d.body,
                       d.published_at
                FROM tenant_notices n JOIN tenant_webhooks w ON w.tenant_id = n.tenant_id
                JOIN disclosures d ON d.id = n.disclosure_id WHERE n.disclosure_id = :d""")
                .param("d", disclosureId).query().listOfRows();
        for (Map<String, Object> r : rows) {
            long delivery = jdbc.sql("INSERT INTO webhook_deliveries (notice_id, url, status) VALUES (:n, :u, 'PENDING') RETURNING id")
                    .param("n", r.get("notice")).param("u", r.get("url")).query(Long.class).single();
            Map<String, Object> notice = new LinkedHashMap<>();
            notice.put("type", "incident.notice");
            notice.put("notice_id", r.get("notice"));
            notice.put("tenant_id", r.get("tenant_id"));
            notice.put("relation", r.get("relation"));
            notice.put("incident", r.get("incident_id"));
            notice.put("version", r.get("version"));
            notice.put("title", r.get("title"));
            notice.put("published_at", String.valueOf(((Timestamp) r.get("published_at")).toInstant()));
            notice.put("body_markdown", r.get("body"));
            String body = json.writeValueAsString(notice);
            senders.execute(() -> send(delivery, (String) r.get("url"), (String) r.get("secret"), body));
        }
    }

    private void send(long delivery, String url, String secret, String body) {
        Duration backoff = properties.webhookBackoff();
        for (int attempt = 1; attempt <= properties.webhookAttempts(); attempt++) {
            WebhookClient.Outcome outcome = client.post(url, Map.of(SIGNATURE_HEADER, "sha256=" + sign(secret, body),
                    "X-Pagewarden-Delivery", String.valueOf(delivery)), body);
            if (Thread.currentThread().isInterrupted()) {
                return;
            }
            Integer status = outcome.status();
            String error = outcome.error();
            boolean done = outcome.delivered();
            boolean last = attempt == properties.webhookAttempts() || outcome.permanent();
            jdbc.sql("""
                    UPDATE webhook_deliveries SET attempts = :a, last_attempt_at = :now, last_status = :s, last_error = :e,
                      status = :st WHERE id = :id""")
                    .param("a", attempt).param("now", Timestamp.from(clock.instant())).param("s", status).param("e", error)
                    .param("st", done ? "DELIVERED" : last ? "FAILED" : "PENDING").param("id", delivery).update();
            if (done) {
                return;
            }
            LOG.warn("webhook delivery {} to {} failed (attempt {}): {}", delivery, url, attempt, error);
            if (last) {
                return;
            }
            try {
                Thread.sleep(backoff);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            backoff = backoff.multipliedBy(2);
        }
    }

    /** Hex HMAC-SHA256 of the body with the tenant's secret: what a receiver recomputes to verify. */
    public static String sign(String secret, String body) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
            return HexFormat.of().formatHex(mac.doFinal(body.getBytes(StandardCharsets.UTF_8)));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    public void close() {
        senders.shutdownNow();
    }
}
