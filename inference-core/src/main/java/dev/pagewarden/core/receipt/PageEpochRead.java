package dev.pagewarden.core.receipt;

/**
 * One page epoch a request's decode read, as the engine saw it when it first read the page (its
 * BIND_READ lineage event).
 *
 * @param worker         the pool ("decode-0")
 * @param page           physical page number in that pool
 * @param epoch          the page's epoch at the read
 * @param slots          cached slots read at that first read: [0, slots)
 * @param writerRequest  the request the engine believes wrote those slots: the reader itself for a
 *                       verified read (its page table entry matched the page's owner and epoch)
 * @param lineageEventId id of the BIND_READ lineage event that recorded the read (0 when the engine
 *                       has no lineage sink); lets the server tell "not shipped yet" from "never happened"
 */
public record PageEpochRead(String worker, int page, long epoch, int slots, long writerRequest, long lineageEventId) {
    public PageEpochRead {
        if (worker == null) {
            throw new IllegalArgumentException("worker is required");
        }
    }
}
