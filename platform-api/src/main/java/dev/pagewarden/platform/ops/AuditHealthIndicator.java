package dev.pagewarden.platform.ops;

import dev.pagewarden.db.lineage.AuditHealth;
import dev.pagewarden.db.lineage.JournalingLineageSink;
import dev.pagewarden.db.lineage.LineageShipper;
import dev.pagewarden.platform.database.DatabaseAvailability;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.ReactiveHealthIndicator;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;

import java.time.Duration;
import java.util.List;

/**
 * The audit path for readiness. DOWN when the journal cannot take events (at its cap or failing:
 * admission is paused, fail closed) or when a corrupted journal stopped shipping (an operator must
 * act). PostgreSQL being away is not DOWN by itself: the engine keeps serving and the journal
 * holds the events - the details say {@code "audit": "degraded"}, with the lag.
 *
 * <p>Reactive and computed on the caller's thread: it reads only in-memory state (never the database),
 * so readiness answers at once even when every worker thread waits on a frozen database.
 */
@Component("audit")
class AuditHealthIndicator implements ReactiveHealthIndicator {
    /** A database failure on a request path counts for health this long unless a later call succeeded. */
    private static final Duration RECENT = Duration.ofSeconds(30);

    private final JournalingLineageSink sink;
    private final LineageShipper shipper;
    private final DatabaseAvailability database;

    AuditHealthIndicator(JournalingLineageSink sink, LineageShipper shipper, DatabaseAvailability database) {
        this.sink = sink;
        this.shipper = shipper;
        this.database = database;
    }

    @Override
    public Mono<Health> health() {
        return Mono.fromSupplier(this::current);
    }

    Health current() {
        AuditHealth h = AuditHealth.of(sink, shipper);
        boolean corrupted = h.shipper().state() == LineageShipper.State.CORRUPTED;
        boolean failing = database.failedWithin(RECENT);
        boolean databaseAway = !h.shipper().up() || failing;
        String mode = corrupted ? "corrupted" : !h.journal().up() ? "paused" : databaseAway ? "degraded" : "ok";
        Health.Builder b = h.journal().up() && !corrupted ? Health.up() : Health.down();
        b.withDetail("audit", mode)
                .withDetail("database", databaseAway ? "unreachable" : "ok")
                .withDetail("journal_bytes", h.journal().bytesUsed())
                .withDetail("journal_cap_bytes", h.journal().capBytes())
                .withDetail("journal_accepting", h.journal().up())
                .withDetail("shipper", h.shipper().state().name().toLowerCase())
                .withDetail("shipped_events", h.shipper().shippedEvents())
                .withDetail("lag_events", h.shipper().lagEvents())
                .withDetail("lag_bytes", h.shipper().lagBytes());
        if (h.shipper().lastShipTime() != null) {
            b.withDetail("last_ship", h.shipper().lastShipTime().toString());
        }
        if (!h.reasons().isEmpty()) {
            b.withDetail("reasons", h.reasons());
        } else if (failing) {
            b.withDetail("reasons", List.of("database unreachable: " + database.lastError()));
        }
        return b.build();
    }
}
