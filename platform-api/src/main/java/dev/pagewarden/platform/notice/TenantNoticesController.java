package dev.pagewarden.platform.notice;

import dev.pagewarden.incident.Blocking;
import dev.pagewarden.incident.disclosure.DisclosureService;
import dev.pagewarden.incident.disclosure.WebhookService;
import dev.pagewarden.platform.error.ApiException;
import dev.pagewarden.platform.tenant.TenantPrincipal;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.security.core.Authentication;
import org.springframework.web.bind.annotation.DeleteMapping;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PutMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;

import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The tenant's side of disclosures: its own incident notices ({@code GET /v1/notices}: JSON, or a readable page
 * for a client that asks for {@code text/html}) and its webhook ({@code PUT /v1/webhook {"url": ...}} returns the
 * signing secret once; {@code DELETE} removes it).
 */
@RestController
class TenantNoticesController {
    private final DisclosureService disclosures;
    private final WebhookService webhooks;

    TenantNoticesController(DisclosureService disclosures, WebhookService webhooks) {
        this.disclosures = disclosures;
        this.webhooks = webhooks;
    }

    @GetMapping("/v1/notices")
    Mono<Map<String, Object>> notices(Authentication auth) {
        String tenant = tenant(auth);
        return Blocking.call(() -> {
            List<Map<String, Object>> data = disclosures.notices(tenant).stream().map(n -> {
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("id", n.id());
                m.put("object", "notice");
                m.put("incident", n.incidentId());
                m.put("version", n.version());
                m.put("title", n.title());
                m.put("relation", n.relation());
                m.put("published_at", n.publishedAt());
                m.put("affected_request_ids", n.requests());
                m.put("exposed_request_ids", n.exposedRequests());
                // the ids the tenant holds (cmpl-..., chatcmpl-...), for requests made through the API
                m.put("affected_responses", n.responseIdsOf(n.requests()));
                m.put("exposed_responses", n.responseIdsOf(n.exposedRequests()));
                m.put("body_markdown", n.body());
                return m;
            }).toList();
            Map<String, Object> out = new LinkedHashMap<>();
            out.put("object", "list");
            out.put("data", data);
            return out;
        });
    }

    /**
     * The same notices as a page, for a client whose Accept names text/html (the tenant key as for the JSON);
     * a client that accepts anything, or JSON, gets the JSON above.
     */
    @GetMapping(value = "/v1/notices", produces = MediaType.TEXT_HTML_VALUE)
    Mono<ResponseEntity<String>> noticesPage(Authentication auth) {
        String tenant = tenant(auth);
        return Blocking.call(() -> ResponseEntity.ok().contentType(new MediaType(MediaType.TEXT_HTML, StandardCharsets.UTF_8))
                .body(NoticePage.html(tenant, disclosures.notices(tenant))));
    }

    @PutMapping("/v1/webhook")
    Mono<Map<String, Object>> register(Authentication auth, @RequestBody Map<String, Object> body) {
        String tenant = tenant(auth);
        if (!(body.get("url") instanceof String url)) {
            throw ApiException.invalid("url", "'url' is required and must be a string");
        }
        return Blocking.call(() -> {
            String secret;
            try {
                secret = webhooks.register(tenant, url);
            } catch (IllegalArgumentException e) {
                throw ApiException.invalid("url", e.getMessage());
            }
            Map<String, Object> out = new LinkedHashMap<>();
            out.put("url", url.strip());
            out.put("secret", secret);
            out.put("signature", "header " + WebhookService.SIGNATURE_HEADER + ": sha256=<hex HMAC-SHA256 of the raw body>");
            out.put("note", "store this secret now: it is shown only once");
            return out;
        });
    }

    @DeleteMapping("/v1/webhook")
    Mono<Map<String, Object>> unregister(Authentication auth) {
        String tenant = tenant(auth);
        return Blocking.call(() -> {
            webhooks.unregister(tenant);
            return Map.of("deleted", true);
        });
    }

    private static String tenant(Authentication auth) {
        return ((TenantPrincipal) auth.getPrincipal()).tenantId();
    }
}
