package dev.pagewarden.core.receipt;

/**
 * One page epoch a request's decode read.
 *
 * @param worker         the pool ("decode-0")
 * @param page           physical page number in that pool
 * @param epoch          the page's epoch at the read
 * @param slots          slots read: [0, slots). In a version 2 receipt the final range - every slot the
 *                       request's steps read in that page epoch by its end (its READ_FINAL lineage event);
 *                       in version 1 the slots cached at the first read (its BIND_READ event)
 * @param writerRequest  the request the engine believes wrote those slots: the reader itself for a
 *                       verified read (its page table entry matched the page's owner and epoch)
 * @param lineageEventId id of the BIND_READ lineage event that recorded the first read (0 when the
 *                       engine has no lineage sink); lets the server tell "not shipped yet" from "never happened"
 */
public record PageEpochRead(String worker, int page, long epoch, int slots, long writerRequest, long lineageEventId) {
    public PageEpochRead {
        if (worker == null) {
            throw new IllegalArgumentException("worker is required");
        }
    }
}
