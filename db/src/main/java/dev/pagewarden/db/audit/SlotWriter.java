package dev.pagewarden.db.audit;

import java.time.Instant;

/**
 * Whose data slots [slotFrom, slotTo) of a page held when they were read: the last WRITE / TRANSFER_IN
 * (in any epoch) before the read. {@code kind} is "NONE" if the slots were never written (writer 0, tenant
 * null, time null) and "SCRUB" if the page was zeroed since (nobody's data).
 */
public record SlotWriter(int slotFrom, int slotTo, String kind, long writerRequest, String writerTenant, long writerEpoch,
                         Instant writtenAt) {
}
