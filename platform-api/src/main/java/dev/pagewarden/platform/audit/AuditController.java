package dev.pagewarden.platform.audit;

import dev.pagewarden.core.receipt.Receipt;
import dev.pagewarden.core.receipt.ReceiptKeys;
import dev.pagewarden.db.audit.LineageQueries;
import dev.pagewarden.db.audit.ReceiptAudit;
import dev.pagewarden.db.audit.RequestLineage;
import dev.pagewarden.platform.error.ApiException;
import dev.pagewarden.platform.ops.PublicRequestIds;
import dev.pagewarden.platform.tenant.TenantPrincipal;
import org.springframework.security.core.annotation.AuthenticationPrincipal;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import java.util.LinkedHashMap;
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

    AuditController(RequestRecordRepository requests, LineageQueries lineage, ReceiptAudit receipts, ReceiptKeys keys) {
        this.requests = requests;
        this.lineage = lineage;
        this.receipts = receipts;
        this.keys = keys;
    }

    @GetMapping("/v1/audit/requests/{id}")
    Mono<Map<String, Object>> request(@PathVariable String id, @AuthenticationPrincipal TenantPrincipal caller) {
        return Mono.fromCallable(() -> audit(id, caller)).subscribeOn(Schedulers.boundedElastic());
    }

    private Map<String, Object> audit(String asked, TenantPrincipal caller) throws Exception {
        RequestRecord record = find(asked, caller.tenantId()).orElseThrow(() -> notFound(asked));
        long requestId = record.id();
        RequestLineage reads = lineage.requestLineageOf(caller.tenantId(), requestId).orElse(null);
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
            ReceiptAudit.Verdict verdict = receipts.verify(Receipt.fromCompact(record.receipt()));
            Map<String, Object> v = new LinkedHashMap<>();
            v.put("status", verdict.status().name().toLowerCase());
            v.put("detail", verdict.detail());
            v.put("foreign_writes", verdict.foreignWrites());
            out.put("receipt_verification", v);
        } else {
            out.put("receipt_verification", Map.of("status", "none", "detail",
                    "no receipt: the request did not finish normally"));
        }
        out.put("lineage", reads == null ? null : Map.of("isolated", reads.isolated(), "reads", reads.reads()));
        return out;
    }

    @GetMapping("/.well-known/pagewarden-receipt-keys")
    Map<String, Object> publicKeys() {
        return Map.of("algorithm", "Ed25519", "encoding", "base64 X.509 SubjectPublicKeyInfo",
                "current", keys.currentKeyId(), "keys", keys.publishedKeys());
    }

    /**
     * The tenant's request by the id it was given ({@code cmpl-}/{@code chatcmpl-} + 24 characters, or
     * those characters alone); a plain number still finds the tenant's rows from before public ids.
     */
    private java.util.Optional<RequestRecord> find(String asked, String tenantId) {
        String bare = asked.startsWith("chatcmpl-") ? asked.substring(9) : asked.startsWith("cmpl-") ? asked.substring(5) : asked;
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
