package dev.pagewarden.core.backend.cpu;

import dev.pagewarden.core.tensor.HostMemory;
import dev.pagewarden.core.backend.KvStorage;
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

    CpuKvStorage(KvLayout layout, int pages) {
        if (pages < 1) {
            throw new IllegalArgumentException("a KV pool needs at least one page, got " + pages);
        }
        this.layout = layout;
        this.pages = pages;
        this.pageBytes = layout.pageBytes();
        this.arena = Arena.ofShared();
        this.memory = HostMemory.allocate(arena, pageBytes * pages);
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
    public void writeSlots(int page, MemorySegment host, int slots) {
        long base = pageBytes * checked(page);
        layout.slotRuns(slots, (offset, floats) ->
                MemorySegment.copy(host, offset * Float.BYTES, memory, base + offset * Float.BYTES, floats * Float.BYTES));
    }

    @Override
    public void scrubPage(int page) {
        memory.asSlice(pageBytes * checked(page), pageBytes).fill((byte) 0);
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
