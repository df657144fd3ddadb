package dev.pagewarden.core.lineage;

/**
 * One step in the life of one KV page: a small fixed record with an id unique across engine
 * restarts, so that shipping it twice is harmless. Fields that do not apply to a kind are -1 / 0 /
 * null as documented per field.
 *
 * @param id          unique event id (see {@link LineageIds})
 * @param kind        what happened
 * @param timeMicros  wall-clock time, microseconds since the epoch
 * @param node        the node (platform replica or engine node) whose process owns the pool: pools, pages and
 *                    epochs are only unique within one node, so (node, worker, page, epoch) names one ownership
 * @param worker      the pool the page belongs to ("prefill-0", "decode-0"), within {@code node}
 * @param page        physical page number in that pool
 * @param epoch       the page's epoch (its allocation count) when this happened
 * @param requestId   the request concerned (the owner, the reader, or the writer); 0 if none
 * @param tenant      that request's tenant; null if none
 * @param slotFrom    first token slot concerned (WRITE, TRANSFER_IN, BIND_READ, READ_FINAL); -1 otherwise
 * @param slotTo      one past the last slot concerned; -1 otherwise
 * @param peerWorker  TRANSFER_OUT: destination pool; TRANSFER_IN: source pool (on the same node); null otherwise
 * @param peerPage    the page at the other end of a transfer; -1 otherwise
 * @param peerEpoch   its epoch; CACHE and REUSE: the 64-bit digest of the cache scope (tenant and prompt cache key,
 *                    see {@code PrefixKeys#scopeDigest}), so that an audit can tell a reuse inside the scope from a
 *                    read across scopes without the scope's text; -1 otherwise
 * @param generation  transfer generation (TRANSFER_*, DEFER, DRAIN); 0 otherwise
 * @param checksum    CRC32C of the page bytes (TRANSFER_*); 0 otherwise
 * @param ok          VERIFY: whether verification passed; true otherwise
 */
public record LineageEvent(long id, Kind kind, long timeMicros, String node, String worker, int page, long epoch, long requestId,
                           String tenant, int slotFrom, int slotTo, String peerWorker, int peerPage, long peerEpoch,
                           int generation, int checksum, boolean ok) {
    public LineageEvent {
        if (node == null || node.isEmpty()) {
            throw new IllegalArgumentException("lineage event " + id + " names no node");
        }
    }

    /** Page life steps. */
    public enum Kind {
        /** The page was given to a request (new epoch). */
        ALLOCATE,
        /** The owner wrote slots [slotFrom, slotTo) (prefill chunk or decode step). */
        WRITE,
        /** The page's bytes left for another pool (transfer frame sent). */
        TRANSFER_OUT,
        /** The page's bytes arrived from another pool and were written here. */
        TRANSFER_IN,
        /** A handoff verification of this page (tags, checksum, counts): {@code ok} says how it went. */
        VERIFY,
        /** A request's decode read this page epoch (recorded once per page per request, not per step). */
        BIND_READ,
        /** The page went back to the free list. */
        RELEASE,
        /** Kept for an aborted request until the transfer ack (generation). */
        DEFER,
        /** The ack came: deferred page released. */
        DRAIN,
        /** Taken out of service (failed handoff, violation, ack timeout). */
        QUARANTINE,
        /** Overwritten with zeros before returning to the free list. */
        SCRUB,
        /**
         * The reader is done with a page epoch it read (its request ends): slots [slotFrom, slotTo) are
         * everything it read in that page epoch, through its last step - the final range of its
         * BIND_READ, which only records the slots cached at the first read. Once per page epoch per
         * request, before the reader releases or quarantines the page.
         */
        READ_FINAL,
        /**
         * The page was taken back from its running owner for other requests (a preemption); its RELEASE follows. The
         * owner is re-prefilled later into new pages (new epochs) and continues.
         */
        PREEMPT,
        /**
         * The owner's full prompt page was kept, read-only, as a cached prefix page of a scope (slots
         * [slotFrom, slotTo), the whole page): {@code requestId} is its writer. The page leaves the cache
         * by a RELEASE in the same epoch (evicted).
         */
        CACHE,
        /**
         * A request of the page's scope reused a cached prefix page (slots [slotFrom, slotTo)) instead of
         * computing it: {@code requestId} and {@code tenant} are the reader's, the writer is the page
         * epoch's CACHE event.
         */
        REUSE
    }
}
