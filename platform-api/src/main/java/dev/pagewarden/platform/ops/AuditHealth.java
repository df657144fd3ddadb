package dev.pagewarden.platform.ops;

import dev.pagewarden.db.lineage.JournalingLineageSink;
import dev.pagewarden.db.lineage.LineageShipper;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.stereotype.Component;

/**
 * The audit path: the journal takes events (not at its cap, no write error) and the shipper is not
 * stopped by corruption. A shipper retrying while PostgreSQL is away is still UP - the journal holds
 * the events - but says so; at the journal cap admission pauses and this goes DOWN.
 */
@Component("audit")
class AuditHealth implements HealthIndicator {
    private final JournalingLineageSink sink;
    private final LineageShipper shipper;

    AuditHealth(JournalingLineageSink sink, LineageShipper shipper) {
        this.sink = sink;
        this.shipper = shipper;
    }

    @Override
    public Health health() {
        LineageShipper.Health h = shipper.health();
        boolean shipping = h.state() != LineageShipper.State.CORRUPTED && h.state() != LineageShipper.State.STOPPED;
        boolean up = shipping && sink.accepting() && sink.lastError() == null;
        Health.Builder b = up ? Health.up() : Health.down();
        b.withDetail("shipper", h.state().name().toLowerCase())
                .withDetail("shipper_detail", h.detail() == null ? "" : h.detail())
                .withDetail("shipped_events", h.shippedEvents())
                .withDetail("journal_bytes", h.journalBytes())
                .withDetail("journal_accepting", sink.accepting())
                .withDetail("emitted_events", sink.emitted());
        if (sink.lastError() != null) {
            b.withDetail("journal_error", sink.lastError().getMessage());
        }
        return b.build();
    }
}
