package dev.pagewarden.platform.evidence;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import dev.pagewarden.db.evidence.ChainVerifier;
import io.github.bucket4j.Bucket;
import io.github.bucket4j.ConsumptionProbe;
import dev.pagewarden.db.evidence.Checkpoints;
import dev.pagewarden.incident.input.Times;
import dev.pagewarden.platform.error.ApiException;
import dev.pagewarden.platform.tenant.TenantPrincipal;
import org.springframework.http.CacheControl;
import org.springframework.http.ContentDisposition;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.security.core.Authentication;
import org.springframework.security.core.annotation.AuthenticationPrincipal;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import javax.sql.DataSource;
import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;

/**
 * {@code GET /.well-known/pagewarden-checkpoints}: the signed chain heads (no login, cacheable), and
 * {@code GET /admin/api/audit/verify}: every chain recomputed, every broken link named.
 */
@RestController
class EvidenceController {
    private final DataSource dataSource;
    private final ChainVerifier verifier;
    private final EvidenceBundles bundles;
    private final CheckpointArchive archive;

    EvidenceController(DataSource dataSource, ChainVerifier verifier, EvidenceBundles bundles, CheckpointArchive archive) {
        this.dataSource = dataSource;
        this.verifier = verifier;
        this.bundles = bundles;
        this.archive = archive;
    }

    /** The incident's evidence bundle (zip), signed; the export is in the admin audit. */
    @GetMapping("/admin/api/incidents/{id}/evidence")
    Mono<ResponseEntity<byte[]>> incidentBundle(@PathVariable long id, Authentication who) {
        return zip(() -> bundles.incident(id, who.getName()), "incident-" + id + "-evidence.zip");
    }

    /**
     * The calling tenant's slice of the incident's evidence (zip): its rows only, with the hashes linking them to
     * checkpoints. Building one reads the incident's lineage, so each tenant may ask {@value #SLICES_PER_MINUTE}
     * times a minute (429 with Retry-After past that): one tenant cannot slow everyone's completions with them.
     */
    @GetMapping("/v1/evidence/incidents/{id}")
    Mono<ResponseEntity<byte[]>> tenantSlice(@PathVariable long id, @AuthenticationPrincipal TenantPrincipal caller) {
        ConsumptionProbe probe = sliceBuckets.get(caller.tenantId(), t -> Bucket.builder()
                .addLimit(l -> l.capacity(SLICES_PER_MINUTE).refillGreedy(SLICES_PER_MINUTE, Duration.ofMinutes(1))).build())
                .tryConsumeAndReturnRemaining(1);
        if (!probe.isConsumed()) {
            return Mono.error(ApiException.rateLimited("at most " + SLICES_PER_MINUTE + " evidence slices a minute per tenant",
                    Duration.ofNanos(probe.getNanosToWaitForRefill())));
        }
        return zip(() -> bundles.tenant(id, caller.tenantId()), "incident-" + id + "-" + caller.tenantId() + "-evidence.zip");
    }

    static final int SLICES_PER_MINUTE = 6;
    private final Cache<String, Bucket> sliceBuckets = Caffeine.newBuilder().maximumSize(100_000)
            .expireAfterAccess(Duration.ofMinutes(10)).build();

    private static Mono<ResponseEntity<byte[]>> zip(java.util.concurrent.Callable<byte[]> make, String name) {
        return Mono.fromCallable(() -> ResponseEntity.ok().contentType(MediaType.parseMediaType("application/zip"))
                        .header(HttpHeaders.CONTENT_DISPOSITION, ContentDisposition.attachment().filename(name).build().toString())
                        .cacheControl(CacheControl.noStore()).body(make.call()))
                .subscribeOn(Schedulers.boundedElastic())
                // a missing incident and one that does not concern the tenant answer alike
                .onErrorMap(NoSuchElementException.class, e -> ApiException.notFound("id", "incident_not_found", "No such incident"));
    }

    /** The latest checkpoint of every chain, plus all since {@code since} (ISO-8601) when given. */
    @GetMapping("/.well-known/pagewarden-checkpoints")
    Mono<ResponseEntity<Map<String, Object>>> checkpoints(@RequestParam(required = false) String since) {
        Instant from = instant("since", since);
        return Mono.fromCallable(() -> {
            try (Connection c = dataSource.getConnection()) {
                List<Map<String, Object>> list = Checkpoints.published(c, from, EvidenceConfiguration.TIMEOUT_SECONDS).stream()
                        .map(EvidenceController::view).toList();
                return ResponseEntity.ok().cacheControl(CacheControl.maxAge(Duration.ofMinutes(1)).cachePublic())
                        .body(Map.<String, Object>of("checkpoints", list));
            }
        }).subscribeOn(Schedulers.boundedElastic());
    }

    /**
     * Every chain recomputed against the pinned trust (never the database's key table alone), and against the
     * checkpoint archive kept outside the database when one is configured.
     */
    @GetMapping("/admin/api/audit/verify")
    Mono<Map<String, Object>> verify(@RequestParam(required = false) String from, @RequestParam(required = false) String to) {
        Instant f = instant("from", from), t = instant("to", to);
        return Mono.fromCallable(() -> {
            ChainVerifier v = verifier.withArchive(archive.read());
            try (Connection c = dataSource.getConnection()) {
                return result(v.verify(c, f, t));
            }
        }).subscribeOn(Schedulers.boundedElastic());
    }

    static Map<String, Object> result(ChainVerifier.Result r) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("ok", r.ok());
        out.put("broken", r.broken().stream().map(b -> {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("table", b.table());
            m.put("id", b.id());
            m.put("why", b.why());
            return m;
        }).toList());
        out.put("checked", r.checked());
        return out;
    }

    /** A checkpoint as published: head in hex, signature in base64, {@code at} in ISO-8601 (microseconds). */
    static Map<String, Object> view(Checkpoints.Checkpoint k) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("chain", k.chain());
        m.put("seq", k.seq());
        m.put("head", k.headHex());
        m.put("at", k.at().toString());
        m.put("key_id", k.keyId());
        m.put("signature", Base64.getEncoder().encodeToString(k.signature()));
        return m;
    }

    private static Instant instant(String name, String value) {
        if (value == null || value.isBlank()) {
            return null;
        }
        try {
            return Times.inRange(name, Instant.parse(value));
        } catch (DateTimeParseException e) {
            throw ApiException.invalid(name, "'" + name + "' must be an ISO-8601 instant such as 2026-03-01T00:00:00Z");
        }
    }
}
