package dev.pagewarden.core.kv;

import java.lang.foreign.MemorySegment;

/**
 * Page memory of one KV pool, on the backend's own device. The engine never addresses it directly:
 * the backend's forward step reads and writes it through page tables, and transfers move whole
 * pages through host staging buffers. Page memory is not zeroed between owners.
 *
 * <p>Beside the bytes every storage keeps a <em>writer shadow</em>: for each token slot, the id of
 * the request whose step (or whose transferred copy) last wrote that slot's bytes, 0 when none since
 * the pool started or the page was scrubbed. Whoever writes the bytes writes the shadow in the same
 * place (the backend's KV append, a transfer landing, a scrub), so it records where bytes really
 * went, whatever the pool's metadata believes. No check reads it: it exists for an independent
 * isolation oracle (the replay lab's ground truth).
 */
public interface KvStorage extends AutoCloseable {

    KvLayout layout();

    int pages();

    /** Copies one whole page into {@code host} (at least {@code layout().pageBytes()} bytes). */
    void readPage(int page, MemorySegment host);

    /** Overwrites one whole page from {@code host}; its writer shadow is left as it was. */
    void writePage(int page, MemorySegment host);

    /**
     * Overwrites only the first {@code slots} token slots of every layer's K and V rows of a page from
     * a whole-page image in {@code host}, and the shadow of those slots from {@code writers} (the
     * source page's shadow, see {@link #writers}). A transfer applies exactly the slots it claims: it
     * never carries the sender's stale bytes beyond them into the receiver's page.
     */
    void writeSlots(int page, MemorySegment host, int slots, long[] writers);

    /** Overwrites a page and its writer shadow with zeros (used only to scrub quarantined pages, never on the hot path). */
    void scrubPage(int page);

    /** A copy of one page's writer shadow, one request id per slot (0: nobody). */
    long[] writers(int page);

    @Override
    void close();
}
