package dev.pagewarden.core.backend.cpu;

import dev.pagewarden.core.tensor.HostMemory;
import dev.pagewarden.core.kv.KvStorage;
import dev.pagewarden.core.kv.KvLayout;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * KV page memory in one preallocated off-heap block (huge pages where available). Pages are never
 * cleared when they change owner - only a scrub writes zeros.
 */
final class CpuKvStorage implements KvStorage {
    private final KvLayout layout;
    private final int pages;
    private final Arena arena;
    final MemorySegment memory;
    private final long pageBytes;
    /** The writer shadow: request id per (page, slot), written beside the bytes, read by no check. */
    private final long[] writers;

    CpuKvStorage(KvLayout layout, int pages) {
        if (pages < 1) {
            throw new IllegalArgumentException("a KV pool needs at least one page, got " + pages);
        }
        this.layout = layout;
        this.pages = pages;
        this.pageBytes = layout.pageBytes();
        this.arena = Arena.ofShared();
        this.memory = HostMemory.allocate(arena, pageBytes * pages);
        this.writers = new long[Math.multiplyExact(pages, layout.pageTokens())];
    }

    @Override
    public KvLayout layout() {
        return layout;
    }

    @Override
    public int pages() {
        return pages;
    }

    /** Float index of the first float of {@code page}. */
    long pageBase(int page) {
        return layout.pageFloats() * page;
    }

    @Override
    public void readPage(int page, MemorySegment host) {
        MemorySegment.copy(memory, pageBytes * checked(page), host, 0, pageBytes);
    }

    @Override
    public void writePage(int page, MemorySegment host) {
        MemorySegment.copy(host, 0, memory, pageBytes * checked(page), pageBytes);
    }

    @Override
    public void writeSlots(int page, MemorySegment host, int slots, long[] from) {
        long base = pageBytes * checked(page);
        layout.slotRuns(slots, (offset, floats) ->
                MemorySegment.copy(host, offset * Float.BYTES, memory, base + offset * Float.BYTES, floats * Float.BYTES));
        System.arraycopy(from, 0, writers, page * layout.pageTokens(), Math.min(slots, layout.pageTokens()));
    }

    @Override
    public void scrubPage(int page) {
        memory.asSlice(pageBytes * checked(page), pageBytes).fill((byte) 0);
        java.util.Arrays.fill(writers, page * layout.pageTokens(), (page + 1) * layout.pageTokens(), 0L);
    }

    @Override
    public long[] writers(int page) {
        int base = checked(page) * layout.pageTokens();
        return java.util.Arrays.copyOfRange(writers, base, base + layout.pageTokens());
    }

    /** Records that request {@code requestId}'s step wrote a slot's K/V (called where the bytes are written). */
    void noteWriter(int page, int slot, long requestId) {
        writers[page * layout.pageTokens() + slot] = requestId;
    }

    private int checked(int page) {
        if (page < 0 || page >= pages) {
            throw new IndexOutOfBoundsException("page " + page + " outside pool of " + pages);
        }
        return page;
    }

    /** Writes {@code src[srcOffset..+n)} to the floats {@code stride} apart from float index {@code floatIndex} on. */
    void put(long floatIndex, int stride, float[] src, int srcOffset, int n) {
        if (stride == 1) {
            MemorySegment.copy(src, srcOffset, memory, ValueLayout.JAVA_FLOAT, floatIndex * Float.BYTES, n);
            return;
        }
        for (int e = 0; e < n; e++) {
            memory.setAtIndex(ValueLayout.JAVA_FLOAT, floatIndex + (long) e * stride, src[srcOffset + e]);
        }
    }

    @Override
    public void close() {
        arena.close();
    }
}
