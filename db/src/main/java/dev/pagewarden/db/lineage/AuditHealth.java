package dev.pagewarden.db.lineage;

import java.util.ArrayList;
import java.util.List;

/**
 * Health of the whole audit path, engine to PostgreSQL, for the platform's health indicators: the journal
 * (disk use against the cap, write errors, corruption found at open) and the shipper (last successful ship,
 * lag, last error). Down means either admission is paused (journal at cap: fail closed) or lineage is not
 * reaching the database (outage, corrupted journal).
 */
public record AuditHealth(JournalingLineageSink.Health journal, LineageShipper.Health shipper) {

    public static AuditHealth of(JournalingLineageSink sink, LineageShipper shipper) {
        return new AuditHealth(sink.health(), shipper.health());
    }

    public boolean up() {
        return journal.up() && shipper.up();
    }

    /** Why it is down, journal first; empty when up. */
    public List<String> reasons() {
        List<String> out = new ArrayList<>(2);
        if (!journal.up()) {
            out.add(journal.detail());
        }
        if (!shipper.up()) {
            out.add("lineage shipper " + shipper.state() + (shipper.detail().isEmpty() ? "" : ": " + shipper.detail()));
        }
        return out;
    }
}
