package dev.pagewarden.db.audit;

import java.time.Instant;
import java.util.List;

/** One page epoch a request's decode read (BIND_READ), who wrote each of its read slots, and how the bytes got there. */
public record PageRead(String worker, int page, long epoch, int slotFrom, int slotTo, Instant readAt,
                       List<SlotWriter> writers, List<TransferHop> transfers) {
    public PageRead {
        writers = List.copyOf(writers);
        transfers = List.copyOf(transfers);
    }

    /** True if every slot read held data written by {@code request} itself (the isolation claim of a receipt). */
    public boolean writtenOnlyBy(long request) {
        return writers.stream().allMatch(w -> w.writerRequest() == request && !"NONE".equals(w.kind()) && !"SCRUB".equals(w.kind()));
    }
}
