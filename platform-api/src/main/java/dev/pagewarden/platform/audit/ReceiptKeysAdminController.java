package dev.pagewarden.platform.audit;

import dev.pagewarden.db.audit.ReceiptKeyRegistry;
import dev.pagewarden.platform.error.ApiException;
import org.springframework.security.core.Authentication;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * Receipt keys for operators: {@code GET /admin/api/receipt-keys} lists every replica's keys,
 * {@code POST /admin/api/receipt-keys/rotate} gives the answering replica a new signing key,
 * {@code POST /admin/api/receipt-keys/{kid}/retire} retires a superseded key. Writes need the admin role.
 */
@RestController
class ReceiptKeysAdminController {
    private final ReceiptKeyRotation rotation;
    private final ReceiptKeyRegistry registry;

    ReceiptKeysAdminController(ReceiptKeyRotation rotation, ReceiptKeyRegistry registry) {
        this.rotation = rotation;
        this.registry = registry;
    }

    @GetMapping("/admin/api/receipt-keys")
    Mono<Map<String, Object>> list() {
        return blocking(() -> {
            Map<String, Object> out = new LinkedHashMap<>();
            out.put("current", rotation.currentKeyId());
            out.put("keys", registry.all().stream().map(ReceiptKeysAdminController::describe).toList());
            return out;
        });
    }

    @PostMapping("/admin/api/receipt-keys/rotate")
    Mono<Map<String, Object>> rotate(@RequestBody(required = false) Map<String, Object> body, Authentication who) {
        Object reason = body == null ? null : body.get("reason");
        if (reason != null && !(reason instanceof String)) {
            throw ApiException.invalid("reason", "'reason' must be a string");
        }
        return blocking(() -> {
            ReceiptKeyRotation.Rotated r = rotation.rotate(who.getName(), (String) reason);
            return Map.of("node", r.node(), "previous", r.previous(), "current", r.current());
        });
    }

    @PostMapping("/admin/api/receipt-keys/{kid}/retire")
    Mono<Map<String, Object>> retire(@PathVariable String kid, Authentication who) {
        return blocking(() -> {
            try {
                return describe(rotation.retire(who.getName(), kid).orElseThrow(() -> ApiException.notFound("kid",
                        "not_found", "no replica registered a receipt key " + kid)));
            } catch (ReceiptKeyRegistry.StillSigning e) {
                throw ApiException.invalid("kid", "key_still_signing", e.getMessage());
            }
        });
    }

    static Map<String, Object> describe(ReceiptKeyRegistry.RegisteredKey k) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("kid", k.keyId());
        out.put("node", k.node());
        out.put("created_at", k.createdAt());
        out.put("superseded_at", k.supersededAt());
        out.put("retired_at", k.retiredAt());
        return out;
    }

    private static <T> Mono<T> blocking(Callable<T> call) {
        return Mono.fromCallable(call).subscribeOn(Schedulers.boundedElastic());
    }
}
