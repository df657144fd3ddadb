package dev.pagewarden.platform.admin;

import dev.pagewarden.core.request.GenerationRequest;
import dev.pagewarden.incident.AdminAccess;
import dev.pagewarden.incident.retention.LegalHold;
import dev.pagewarden.incident.retention.LegalHoldService;
import dev.pagewarden.platform.engine.EngineHost;
import dev.pagewarden.platform.engine.ModelIds;
import dev.pagewarden.platform.engine.ModelVisibility;
import dev.pagewarden.platform.error.ApiException;
import dev.pagewarden.platform.tenant.ApiKey;
import dev.pagewarden.platform.tenant.Tenant;
import dev.pagewarden.platform.tenant.TenantLimits;
import dev.pagewarden.platform.tenant.TenantService;
import dev.pagewarden.platform.tenant.UnknownTenantException;
import org.springframework.http.HttpStatus;
import org.springframework.security.core.Authentication;
import org.springframework.web.bind.annotation.DeleteMapping;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.PutMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.ResponseStatus;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Set;
import java.util.concurrent.Callable;

/**
 * Operator endpoints under {@code /admin/api}: tenants, keys (shown once), limits, model
 * visibility, legal holds on lineage. Thin: validation and persistence live in the services; JPA runs off the event loop.
 */
@RestController
class AdminApiController {
    private final TenantService tenants;
    private final EngineHost host;
    private final LegalHoldService holds;

    AdminApiController(TenantService tenants, EngineHost host, LegalHoldService holds) {
        this.tenants = tenants;
        this.host = host;
        this.holds = holds;
    }

    @PostMapping("/admin/api/tenants")
    @ResponseStatus(HttpStatus.CREATED)
    Mono<Map<String, Object>> createTenant(@RequestBody Map<String, Object> body) {
        Object name = body.get("name");
        if (!(name instanceof String s)) {
            throw ApiException.invalid("name", "'name' is required and must be a string");
        }
        return blocking(() -> describe(tenants.create(s)));
    }

    @GetMapping("/admin/api/tenants")
    Mono<List<Map<String, Object>>> listTenants() {
        return blocking(() -> tenants.list().stream().map(AdminApiController::describe).toList());
    }

    @GetMapping("/admin/api/tenants/{id}")
    Mono<Map<String, Object>> tenant(@PathVariable String id) {
        return blocking(() -> describe(tenants.get(id)));
    }

    @PostMapping("/admin/api/tenants/{id}/keys")
    @ResponseStatus(HttpStatus.CREATED)
    Mono<Map<String, Object>> issueKey(@PathVariable String id, @RequestBody(required = false) Map<String, Object> body) {
        Object name = body == null ? null : body.get("name");
        if (name != null && !(name instanceof String)) {
            throw ApiException.invalid("name", "'name' must be a string");
        }
        return blocking(() -> {
            TenantService.IssuedKey k = tenants.issueKey(id, (String) name);
            Map<String, Object> out = new LinkedHashMap<>();
            out.put("tenant_id", k.tenantId());
            out.put("prefix", k.prefix());
            out.put("key", k.key());
            out.put("note", "store this key now: it is shown only once");
            return out;
        });
    }

    @GetMapping("/admin/api/tenants/{id}/keys")
    Mono<List<Map<String, Object>>> keys(@PathVariable String id) {
        return blocking(() -> tenants.keys(id).stream().map(AdminApiController::describe).toList());
    }

    @DeleteMapping("/admin/api/tenants/{id}/keys/{prefix}")
    Mono<Map<String, Object>> revoke(@PathVariable String id, @PathVariable String prefix) {
        return blocking(() -> {
            tenants.revokeKey(id, prefix);
            return Map.of("tenant_id", id, "prefix", prefix, "revoked", true);
        });
    }

    @PutMapping("/admin/api/tenants/{id}/limits")
    Mono<Map<String, Object>> limits(@PathVariable String id, @RequestBody Map<String, Object> body) {
        for (String k : body.keySet()) {
            if (!List.of("requests_per_minute", "tokens_per_minute", "max_concurrent", "max_context", "weight").contains(k)) {
                throw ApiException.invalid(k, "unknown_parameter", "Unrecognized limit: " + k);
            }
        }
        TenantLimits limits = new TenantLimits(limit(body, "requests_per_minute"), limit(body, "tokens_per_minute"),
                limit(body, "max_concurrent"), limit(body, "max_context"), weight(body));
        return blocking(() -> describe(tenants.setLimits(id, limits)));
    }

    /** Switches a tenant's prefix cache: {@code {"enabled": false}} keeps its prompts out of the cache entirely. */
    @PutMapping("/admin/api/tenants/{id}/prefix-cache")
    Mono<Map<String, Object>> prefixCache(@PathVariable String id, @RequestBody Map<String, Object> body) {
        for (String k : body.keySet()) {
            if (!k.equals("enabled")) {
                throw ApiException.invalid(k, "unknown_parameter", "Unrecognized setting: " + k);
            }
        }
        if (!(body.get("enabled") instanceof Boolean on)) {
            throw ApiException.invalid("enabled", "'enabled' is required and must be true or false");
        }
        return blocking(() -> describe(tenants.setPrefixCache(id, on)));
    }

    @PutMapping("/admin/api/models/{model}/visibility")
    Mono<Map<String, Object>> visibility(@PathVariable String model, @RequestBody Map<String, Object> body,
                                         Authentication who) {
        if (!ModelIds.valid(model)) {
            throw ApiException.invalid("model", "not a valid model id: " + ModelIds.problem());
        }
        if (!(body.get("private") instanceof Boolean makePrivate)) {
            throw ApiException.invalid("private", "'private' is required and must be true or false");
        }
        // the security rules let a responder in (taking a model private fails closed); restoring is an admin's call
        String needed = "ROLE_" + (makePrivate ? AdminAccess.MODEL_TAKE_DOWN_ROLE : AdminAccess.MODEL_RESTORE_ROLE);
        if (who.getAuthorities().stream().noneMatch(a -> needed.equals(a.getAuthority()))) {
            throw ApiException.forbidden("making a model " + (makePrivate ? "private" : "public again") + " needs the "
                    + needed.substring(5).toLowerCase(java.util.Locale.ROOT) + " role");
        }
        return blocking(() -> {
            ModelVisibility v = host.setPrivate(model, makePrivate, who.getName());
            return Map.of("model", v.modelId(), "private", v.isPrivate(), "changed_at", v.changedAt(),
                    "changed_by", v.changedBy());
        });
    }

    /** {@code {"from", "to", "reason"}}: ISO-8601 times (or dates, UTC), to after from, a reason; answers {@code {"id"}}. */
    @PostMapping("/admin/api/holds")
    @ResponseStatus(HttpStatus.CREATED)
    Mono<Map<String, Object>> addHold(@RequestBody Map<String, Object> body, Authentication who) {
        for (String k : body.keySet()) {
            if (!Set.of("from", "to", "reason").contains(k)) {
                throw ApiException.invalid(k, "unknown_parameter", "Unrecognized field: " + k + " (expected from, to, reason)");
            }
        }
        String from = text(body, "from"), to = text(body, "to"), reason = text(body, "reason");
        return blocking(() -> Map.of("id", holds.add(LegalHoldService.parseTime("from", from),
                LegalHoldService.parseTime("to", to), reason, who.getName()).id()));
    }

    @GetMapping("/admin/api/holds")
    Mono<Map<String, Object>> listHolds() {
        return blocking(() -> Map.of("holds", holds.list().stream().map(AdminApiController::describe).toList()));
    }

    @DeleteMapping("/admin/api/holds/{id}")
    Mono<Map<String, Object>> releaseHold(@PathVariable long id, Authentication who) {
        return blocking(() -> describe(holds.release(id, who.getName())));
    }

    private static String text(Map<String, Object> body, String name) {
        Object v = body.get(name);
        if (v != null && !(v instanceof String)) {
            throw ApiException.invalid(name, "'" + name + "' must be a string");
        }
        return (String) v;
    }

    private static Map<String, Object> describe(LegalHold h) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("id", h.id());
        out.put("from", h.from());
        out.put("to", h.to());
        out.put("reason", h.reason());
        out.put("created_at", h.createdAt());
        out.put("created_by", h.createdBy());
        out.put("active", h.active());
        out.put("released_at", h.releasedAt());
        out.put("released_by", h.releasedBy());
        return out;
    }

    private static Integer limit(Map<String, Object> body, String name) {
        Object v = body.get(name);
        if (v == null) {
            return null;
        }
        if (!(v instanceof Integer i) || i <= 0) {
            throw ApiException.invalid(name, name + " must be a positive integer or null (no limit)");
        }
        return i;
    }

    /** Absent or null: the default weight, as a limit left out of the body is no limit. */
    private static int weight(Map<String, Object> body) {
        Object v = body.get("weight");
        if (v == null) {
            return GenerationRequest.MIN_WEIGHT;
        }
        if (!(v instanceof Integer i) || i < GenerationRequest.MIN_WEIGHT || i > GenerationRequest.MAX_WEIGHT) {
            throw ApiException.invalid("weight", TenantLimits.weightProblem(v));
        }
        return i;
    }

    private static <T> Mono<T> blocking(Callable<T> call) {
        return Mono.fromCallable(call).subscribeOn(Schedulers.boundedElastic())
                .onErrorMap(UnknownTenantException.class, e -> ApiException.notFound(null, "not_found", e.getMessage()))
                .onErrorMap(NoSuchElementException.class, e -> ApiException.notFound(null, "not_found", e.getMessage()));
    }

    private static Map<String, Object> describe(Tenant t) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("id", t.id());
        out.put("name", t.displayName());
        out.put("created_at", t.createdAt());
        out.put("active", t.active());
        TenantLimits l = t.limits();
        Map<String, Object> limits = new LinkedHashMap<>();
        limits.put("requests_per_minute", l.requestsPerMinute());
        limits.put("tokens_per_minute", l.tokensPerMinute());
        limits.put("max_concurrent", l.maxConcurrent());
        limits.put("max_context", l.maxContext());
        limits.put("weight", l.weight());
        out.put("limits", limits);
        out.put("prefix_cache", t.prefixCache());
        return out;
    }

    private static Map<String, Object> describe(ApiKey k) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("prefix", k.prefix());
        out.put("name", k.name());
        out.put("created_at", k.createdAt());
        out.put("revoked_at", k.revokedAt());
        return out;
    }
}
