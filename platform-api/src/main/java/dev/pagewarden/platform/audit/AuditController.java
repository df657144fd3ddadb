package dev.pagewarden.platform.audit;

import dev.pagewarden.core.receipt.Receipt;
import dev.pagewarden.core.receipt.ReceiptKeys;
import dev.pagewarden.core.receipt.TrustedKeys;
import dev.pagewarden.db.audit.KeyTrust;
import dev.pagewarden.db.audit.LineageQueries;
import dev.pagewarden.db.audit.PageRead;
import dev.pagewarden.db.audit.ReceiptAudit;
import dev.pagewarden.db.audit.ReceiptKeyRegistry;
import dev.pagewarden.db.audit.RequestLineage;
import dev.pagewarden.platform.error.ApiException;
import dev.pagewarden.platform.http.PublicRequestIds;
import dev.pagewarden.platform.tenant.TenantPrincipal;
import org.springframework.http.CacheControl;
import org.springframework.http.ResponseEntity;
import org.springframework.security.core.annotation.AuthenticationPrincipal;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A tenant's own audit trail: {@code GET /v1/audit/requests/{id}} (the {@code id} of a completion)
 * returns the request's page lineage and the server-side verification of its receipt. Another
 * tenant's request is indistinguishable from a missing one (404). The public receipt keys are at
 * {@code GET /.well-known/pagewarden-receipt-keys} for offline verification.
 */
@RestController
class AuditController {
    private final RequestRecordRepository requests;
    private final LineageQueries lineage;
    private final ReceiptAudit receipts;
    private final ReceiptKeys keys;
    private final ReceiptKeyRegistry registry;
    private final KeyTrust trust;

    AuditController(RequestRecordRepository requests, LineageQueries lineage, ReceiptAudit receipts, ReceiptKeys keys,
                    ReceiptKeyRegistry registry, KeyTrust trust) {
        this.requests = requests;
        this.lineage = lineage;
        this.receipts = receipts;
        this.keys = keys;
        this.registry = registry;
        this.trust = trust;
    }

    @GetMapping("/v1/audit/requests/{id}")
    Mono<Map<String, Object>> request(@PathVariable String id, @AuthenticationPrincipal TenantPrincipal caller) {
        return Mono.fromCallable(() -> audit(id, caller)).subscribeOn(Schedulers.boundedElastic());
    }

    private Map<String, Object> audit(String asked, TenantPrincipal caller) throws Exception {
        RequestRecord record = find(asked, caller.tenantId()).orElseThrow(() -> notFound(asked));
        long requestId = record.id();
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("id", asked);
        out.put("request_id", requestId);
        out.put("model", record.model());
        out.put("status", record.status());
        out.put("error_code", record.errorCode());
        out.put("finish_reason", record.finishReason());
        out.put("prompt_tokens", record.promptTokens());
        out.put("completion_tokens", record.generatedTokens());
        out.put("received_at", record.receivedAt());
        out.put("finished_at", record.finishedAt());
        out.put("receipt", record.receipt());
        if (record.receipt() != null) {
            Receipt receipt = Receipt.fromCompact(record.receipt());
            // the cached prefix pages the request reused (its own scope's, the verification below checks)
            out.put("reused_prefix_pages", receipt.body().reused().stream().map(r -> {
                Map<String, Object> e = new LinkedHashMap<>();
                e.put("worker", r.worker());
                e.put("page", r.page());
                e.put("epoch", r.epoch());
                e.put("position_from", r.positionFrom());
                e.put("position_to", r.positionTo());
                e.put("writer_request", r.writerRequest());
                return e;
            }).toList());
            ReceiptAudit.Verdict verdict = receipts.verify(receipt,
                    new ReceiptAudit.Row(requestId, record.tenantId(), record.model()));
            Map<String, Object> v = new LinkedHashMap<>();
            v.put("status", verdict.status().name().toLowerCase());
            v.put("detail", verdict.detail());
            v.put("foreign_writes", verdict.foreignWrites());
            out.put("receipt_verification", v);
        } else {
            // a finished request without one was served by an engine without a receipt signer
            out.put("receipt_verification", Map.of("status", "none", "detail", "FINISHED".equals(record.status())
                    ? "no receipt: the engine that served it signs none"
                    : "no receipt: the request did not finish normally"));
        }
        // read after the verification: lineage arrives in emission order and is never taken back, so the
        // view shows at least every page epoch the verification judged (read first, it could show fewer)
        RequestLineage reads = lineage.requestLineageOf(caller.tenantId(), requestId).orElse(null);
        out.put("lineage", reads == null ? null : lineageView(reads));
        return out;
    }

    /**
     * Every page epoch the request read, in read order, with the slots it read there by its end (the
     * receipt's final ranges) and who last wrote each of those slots - tenant and request - before it
     * was done reading them; plus the transfers that filled those pages.
     */
    private static Map<String, Object> lineageView(RequestLineage lineage) {
        Map<String, Object> view = new LinkedHashMap<>();
        view.put("isolated", lineage.isolated());
        view.put("page_epochs", lineage.reads().size());
        view.put("slots", lineage.reads().stream().mapToInt(PageRead::slots).sum());
        view.put("reads", lineage.reads().stream().map(AuditController::readView).toList());
        return view;
    }

    private static Map<String, Object> readView(PageRead read) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("node", read.node());
        m.put("worker", read.worker());
        m.put("page", read.page());
        m.put("epoch", read.epoch());
        m.put("slot_from", read.slotFrom());
        m.put("slot_to", read.slotTo());
        m.put("first_read_at", read.readAt());
        m.put("lineage_event_id", read.readEventId());
        m.put("writers", read.writers().stream().map(w -> {
            Map<String, Object> e = new LinkedHashMap<>();
            e.put("slot_from", w.slotFrom());
            e.put("slot_to", w.slotTo());
            e.put("kind", w.kind());
            e.put("writer_request", w.writerRequest());
            e.put("writer_tenant", w.writerTenant());
            e.put("writer_epoch", w.writerEpoch());
            e.put("written_at", w.writtenAt());
            return e;
        }).toList());
        m.put("transfers", read.transfers().stream().map(h -> {
            Map<String, Object> e = new LinkedHashMap<>();
            e.put("from_worker", h.fromWorker());
            e.put("from_page", h.fromPage());
            e.put("from_epoch", h.fromEpoch());
            e.put("generation", h.generation());
            e.put("slot_from", h.slotFrom());
            e.put("slot_to", h.slotTo());
            e.put("checksum_received", h.checksumReceived());
            e.put("checksum_sent", h.checksumSent());
            e.put("checksums_agree", h.checksumsAgree());
            e.put("writer_request", h.writerRequest());
            e.put("at", h.at());
            return e;
        }).toList());
        return m;
    }

    /**
     * Every replica's receipt keys that chain to this replica's pinned trust (retired ones too: they verify the receipts
     * they signed), as a JWK set (RFC 8037 {@code OKP} keys) with {@code spki} (base64 X.509, what
     * {@link ReceiptKeys#parsePublished} reads), {@code node}, {@code created_at}, {@code root} (pinned) or the
     * endorsement by the key it replaced ({@code endorsed_by}, {@code endorsed_at}, {@code endorsement}: base64
     * Ed25519), and once retired {@code retired_at}; {@code current} is the key this replica signs with. A key row in
     * the database that does not chain to the pinned roots is not served. No login; cacheable for a minute (a new
     * replica's key is registered before it signs, so a cached list lacks at most keys of receipts younger than the list).
     */
    @GetMapping("/.well-known/pagewarden-receipt-keys")
    Mono<ResponseEntity<Map<String, Object>>> publicKeys() {
        return Mono.fromCallable(() -> {
            List<Map<String, Object>> jwks = new ArrayList<>();
            TrustedKeys trusted = trust.keys();
            for (ReceiptKeyRegistry.RegisteredKey k : registry.all()) {
                TrustedKeys.TrustedKey t = trusted.get(k.keyId());
                if (t == null || !Arrays.equals(t.key().getEncoded(), k.publicKey().getEncoded())) {
                    continue;
                }
                Map<String, Object> jwk = PublishedKeys.jwk(k.keyId(), k.publicKey(), t.root(), k.endorsement());
                jwk.put("node", k.node());
                jwk.put("created_at", k.createdAt());
                if (k.retiredAt() != null) {
                    jwk.put("retired_at", k.retiredAt()); // verifies what it signed; signs nothing new
                }
                jwks.add(jwk);
            }
            Map<String, Object> body = new LinkedHashMap<>();
            body.put("current", keys.currentKeyId());
            body.put("keys", jwks);
            return ResponseEntity.ok().cacheControl(CacheControl.maxAge(Duration.ofMinutes(1)).cachePublic()).body(body);
        }).subscribeOn(Schedulers.boundedElastic());
    }

    /**
     * The tenant's request by the id it was given ({@code cmpl-}/{@code chatcmpl-}/{@code resp_} + 24 characters, or
     * those characters alone); a plain number still finds the tenant's rows from before public ids.
     */
    private java.util.Optional<RequestRecord> find(String asked, String tenantId) {
        String bare = dev.pagewarden.incident.TenantRequestIds.bare(asked);
        if (PublicRequestIds.isWellFormed(bare)) {
            return requests.findByPublicIdAndTenantId(bare, tenantId);
        }
        if (!bare.isEmpty() && bare.length() <= 18 && bare.chars().allMatch(Character::isDigit)) {
            return requests.findByIdAndTenantId(Long.parseLong(bare), tenantId);
        }
        return java.util.Optional.empty();
    }

    private static ApiException notFound(String id) {
        return ApiException.notFound("id", "request_not_found", "No request '" + id + "' for this tenant");
    }
}
