package dev.pagewarden.platform.ops;

import dev.pagewarden.db.lineage.AuditHealth;
import dev.pagewarden.db.lineage.JournalingLineageSink;
import dev.pagewarden.db.lineage.LineageShipper;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.stereotype.Component;

/**
 * The audit path for readiness. DOWN when the journal cannot take events (at its cap or failing:
 * admission is paused, fail closed) or when a corrupted journal stopped shipping (an operator must
 * act). PostgreSQL being away is not DOWN by itself: the engine keeps serving and the journal
 * holds the events - the details say so, with the lag.
 */
@Component("audit")
class AuditHealthIndicator implements HealthIndicator {
    private final JournalingLineageSink sink;
    private final LineageShipper shipper;

    AuditHealthIndicator(JournalingLineageSink sink, LineageShipper shipper) {
        this.sink = sink;
        this.shipper = shipper;
    }

    @Override
    public Health health() {
        AuditHealth h = AuditHealth.of(sink, shipper);
        boolean corrupted = h.shipper().state() == LineageShipper.State.CORRUPTED;
        Health.Builder b = h.journal().up() && !corrupted ? Health.up() : Health.down();
        b.withDetail("journal_bytes", h.journal().bytesUsed())
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
        }
        return b.build();
    }
}
