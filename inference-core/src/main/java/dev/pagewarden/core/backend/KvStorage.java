package dev.pagewarden.core.backend;

import dev.pagewarden.core.kv.KvLayout;

import java.lang.foreign.MemorySegment;

/**
 * Page memory of one KV pool, on the backend's own device. The engine never addresses it directly:
 * the backend's forward step reads and writes it through page tables, and transfers move whole
 * pages through host staging buffers. Page memory is not zeroed between owners.
 */
public interface KvStorage extends AutoCloseable {

    KvLayout layout();

    int pages();

    /** Copies one whole page into {@code host} (at least {@code layout().pageBytes()} bytes). */
    void readPage(int page, MemorySegment host);

    /** Overwrites one whole page from {@code host}. */
    void writePage(int page, MemorySegment host);

    /**
     * Overwrites only the first {@code slots} token slots of every layer's K and V rows of a page from
     * a whole-page image in {@code host}. A transfer applies exactly the slots it claims: it never
     * carries the sender's stale bytes beyond them into the receiver's page.
     */
    default void writeSlots(int page, MemorySegment host, int slots) {
        KvLayout l = layout();
        if (slots >= l.pageTokens()) {
            writePage(page, host);
            return;
        }
        MemorySegment scratch = java.lang.foreign.Arena.ofAuto().allocate(l.pageBytes(), 64);
        readPage(page, scratch);
        l.slotRuns(slots, (offset, floats) ->
                MemorySegment.copy(host, offset * Float.BYTES, scratch, offset * Float.BYTES, floats * Float.BYTES));
        writePage(page, scratch);
    }

    /** Overwrites a page with zeros (used only to scrub quarantined pages, never on the hot path). */
    void scrubPage(int page);

    @Override
    void close();
}
