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

    /** Overwrites a page with zeros (used only to scrub quarantined pages, never on the hot path). */
    void scrubPage(int page);

    @Override
    void close();
}
