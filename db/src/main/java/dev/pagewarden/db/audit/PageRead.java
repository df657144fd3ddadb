package dev.pagewarden.db.audit;

import java.time.Instant;
import java.util.List;

/**
 * One page epoch a request's decode read, who wrote each of its read slots, and how the bytes got there.
 *
 * @param node        the node whose pool {@code worker} is
 * @param slotFrom    first slot read (0)
 * @param slotTo      one past the last slot read: the final range, every slot the request read in this
 *                    page epoch by its end (its READ_FINAL; the first read's range for engines before receipts v2)
 * @param readAt      when the request first read the page epoch (its BIND_READ)
 * @param writers     who last wrote slots [slotFrom, slotTo) before the request was done reading them
 * @param readEventId id of the BIND_READ event: the {@code lineage_event_id} the receipt names for this read
 */
public record PageRead(String node, String worker, int page, long epoch, int slotFrom, int slotTo, Instant readAt,
                       List<SlotWriter> writers, List<TransferHop> transfers, long readEventId) {
    public PageRead {
        writers = List.copyOf(writers);
        transfers = List.copyOf(transfers);
    }

    /** True if every slot read held data written by {@code request} itself (the isolation claim of a receipt). */
    public boolean writtenOnlyBy(long request) {
        return writers.stream().allMatch(w -> w.writerRequest() == request && !"NONE".equals(w.kind()) && !"SCRUB".equals(w.kind()));
    }

    /** Slots read: {@code slotTo - slotFrom}. */
    public int slots() {
        return slotTo - slotFrom;
    }
}
