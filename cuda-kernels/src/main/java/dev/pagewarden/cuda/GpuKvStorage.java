package dev.pagewarden.cuda;

import dev.pagewarden.core.kv.KvStorage;
import dev.pagewarden.core.kv.KvLayout;
import dev.pagewarden.core.kv.KvPool;
import dev.pagewarden.core.kv.PageState;
import dev.pagewarden.core.kv.PageTags;
import jcuda.driver.CUdeviceptr;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * KV page memory in device memory (one cuMemAlloc, page-major as {@link KvLayout}), with one owner
 * tag per page beside it (owner request, epoch, written slots; 24 bytes, {@code PageTag} in
 * common.cuh). The pool's metadata on the host stays the source of truth: before each step the tags
 * of the pages it touches are brought up to date from it, and the kernels then refuse any page whose
 * tag disagrees with the sequence's page table. Pages are never cleared on reuse; scrub zeroes one.
 *
 * <p>The writer shadow ({@link KvStorage}) lives on the device too: one {@code long} per (page, slot),
 * page-major, written by the KV append kernel with the row's request id beside the K/V bytes, copied
 * with the slots a transfer applies, zeroed by a scrub. No check reads it.
 */
public final class GpuKvStorage implements KvStorage {
    /** Owner of a page no request may read (free, deferred, quarantined): matches no request id. */
    static final long NO_OWNER = Long.MIN_VALUE;
    static final int TAG_BYTES = 24;

    private final CudaDevice device;
    private final KvLayout layout;
    private final int pages;
    private final long pageBytes;
    final CUdeviceptr memory;
    final CUdeviceptr tags;
    /** The writer shadow: request id per (page, slot), {@code pageTokens} longs a page. */
    final CUdeviceptr writers;
    private final long shadowPageBytes;
    /** Host copy of the device tags, pinned so that a dirty range goes up in one copy. */
    private final CudaDevice.Pinned tagMirror;
    private final CudaDevice.Pinned staging;
    /** Host side of one page's writer shadow on its way up or down. */
    private final CudaDevice.Pinned shadowStaging;
    private final CUdeviceptr stagingDevice;
    private final CUdeviceptr pageList;
    private final CUdeviceptr crcOut;
    private boolean closed;

    GpuKvStorage(CudaDevice device, KvLayout layout, int pages) {
        if (pages < 1) {
            throw new IllegalArgumentException("a KV pool needs at least one page, got " + pages);
        }
        this.device = device;
        this.layout = layout;
        this.pages = pages;
        this.pageBytes = layout.pageBytes();
        this.shadowPageBytes = 8L * layout.pageTokens();
        device.retain(); // page memory outlives no device: the last holder frees the context
        CUdeviceptr[] allocated = device.call(() -> {
            CUdeviceptr mem = device.alloc(pageBytes * pages);
            CUdeviceptr t = device.alloc((long) TAG_BYTES * pages);
            CUdeviceptr s = device.alloc(pageBytes);
            CUdeviceptr l = device.alloc(256);
            CUdeviceptr c = device.alloc(256);
            CUdeviceptr w = device.alloc(shadowPageBytes * pages);
            device.zero(w, shadowPageBytes * pages); // nobody wrote any slot yet
            return new CUdeviceptr[] {mem, t, s, l, c, w};
        });
        this.memory = allocated[0];
        this.tags = allocated[1];
        this.stagingDevice = allocated[2];
        this.pageList = allocated[3];
        this.crcOut = allocated[4];
        this.writers = allocated[5];
        this.tagMirror = device.call(() -> device.pinned((long) TAG_BYTES * pages));
        this.staging = device.call(() -> device.pinned(pageBytes + 256));
        this.shadowStaging = device.call(() -> device.pinned(shadowPageBytes));
        for (int p = 0; p < pages; p++) {
            setMirror(p, NO_OWNER, 0, 0);
        }
        device.run(() -> {
            device.copyToDevice(tags, tagMirror, 0, (long) TAG_BYTES * pages);
            device.sync();
        });
    }

    @Override
    public KvLayout layout() {
        return layout;
    }

    @Override
    public int pages() {
        return pages;
    }

    private void setMirror(int p, long owner, long epoch, long written) {
        MemorySegment m = tagMirror.segment();
        m.set(ValueLayout.JAVA_LONG, (long) p * TAG_BYTES, owner);
        m.set(ValueLayout.JAVA_LONG, (long) p * TAG_BYTES + 8, epoch);
        m.set(ValueLayout.JAVA_LONG, (long) p * TAG_BYTES + 16, written);
    }

    /** The device tag of a page as last uploaded: {owner, epoch, written}. */
    long[] tag(int page) {
        checked(page);
        MemorySegment m = tagMirror.segment();
        return new long[] {m.get(ValueLayout.JAVA_LONG, (long) page * TAG_BYTES),
                m.get(ValueLayout.JAVA_LONG, (long) page * TAG_BYTES + 8),
                m.get(ValueLayout.JAVA_LONG, (long) page * TAG_BYTES + 16)};
    }

    /**
     * Brings the device tags of {@code touched} up to date with the pool's metadata (on the device
     * thread, before the step's kernels on the same stream). Only changed tags travel, as one range.
     */
    void syncTags(PageTags pageTags, int[] touched, java.util.Map<Integer, Long> cachedReaders) {
        int lo = Integer.MAX_VALUE;
        int hi = -1;
        for (int p : touched) {
            checked(p);
            KvPool.PageInfo info = pageTags.info(p);
            long owner = deviceOwner(info, cachedReaders);
            long[] now = tag(p);
            if (now[0] != owner || now[1] != info.epoch() || now[2] != info.writtenSlots()) {
                setMirror(p, owner, info.epoch(), info.writtenSlots());
                lo = Math.min(lo, p);
                hi = Math.max(hi, p);
            }
        }
        if (hi >= 0) {
            long from = (long) lo * TAG_BYTES;
            device.copyToDevice(tags.withByteOffset(from), tagMirror, from, (long) (hi - lo + 1) * TAG_BYTES);
        }
    }

    /**
     * The owner a page's device tag names for one step: an owned page's owner; a cached prefix page's
     * reader of its own scope in this step ({@link StepPlan#cachedReaders}), else nobody; nobody for any
     * other page.
     */
    static long deviceOwner(KvPool.PageInfo info, java.util.Map<Integer, Long> cachedReaders) {
        return switch (info.state()) {
            case OWNED -> info.owner();
            case CACHED -> cachedReaders.getOrDefault(info.page(), NO_OWNER);
            case FREE, DEFERRED, QUARANTINED -> NO_OWNER;
        };
    }

    /** Test and lab hook: overwrites a page's device tag, as a corrupted or stale tag would look. */
    void forceTag(int page, long owner, long epoch, long written) {
        checked(page);
        device.run(() -> {
            setMirror(page, owner, epoch, written);
            device.copyToDevice(tags.withByteOffset((long) page * TAG_BYTES), tagMirror, (long) page * TAG_BYTES, TAG_BYTES);
            device.sync();
        });
    }

    @Override
    public void readPage(int page, MemorySegment host) {
        readPageWithChecksum(page, host);
    }

    /**
     * Copies one page into {@code host} and returns its CRC32C, computed on the device while copying
     * (equal to {@code CRC32C} of the bytes the host receives, the checksum of a transfer frame).
     */
    public synchronized int readPageWithChecksum(int page, MemorySegment host) {
        checked(page);
        int crc = device.call(() -> {
            requireOpen();
            staging.segment().set(ValueLayout.JAVA_INT, 0, page);
            device.copyToDevice(pageList, staging, 0, 4);
            device.launch("pw_page_crc32c", 1, 1, 256, 0, memory, pageBytes, pageList, crcOut, stagingDevice);
            device.copyToHost(staging, pageBytes, crcOut, 4); // the CRC lands after the page
            device.copyToHost(staging, 0, stagingDevice, pageBytes);
            device.sync();
            return staging.segment().get(ValueLayout.JAVA_INT, pageBytes);
        });
        // the caller's segment may be confined to the caller's thread: copy out here, not on the device thread
        MemorySegment.copy(staging.segment(), 0, host, 0, pageBytes);
        return crc;
    }

    /** CRC32C of a page as the device computes it, without copying the page out. */
    public synchronized int checksum(int page) {
        checked(page);
        return device.call(() -> {
            requireOpen();
            staging.segment().set(ValueLayout.JAVA_INT, 0, page);
            device.copyToDevice(pageList, staging, 0, 4);
            device.launch("pw_page_crc32c", 1, 1, 256, 0, memory, pageBytes, pageList, crcOut, null);
            device.copyToHost(staging, 0, crcOut, 4);
            device.sync();
            return staging.segment().get(ValueLayout.JAVA_INT, 0);
        });
    }

    @Override
    public synchronized void writePage(int page, MemorySegment host) {
        checked(page);
        requireOpen();
        MemorySegment.copy(host, 0, staging.segment(), 0, pageBytes); // on the caller's thread (its segment)
        device.run(() -> {
            device.copyToDevice(memory.withByteOffset(pageBytes * page), staging, 0, pageBytes);
            device.sync();
        });
    }

    @Override
    public synchronized void writeSlots(int page, MemorySegment host, int slots, long[] from) {
        checked(page);
        int n = Math.min(slots, layout.pageTokens());
        if (n <= 0) {
            return;
        }
        requireOpen();
        MemorySegment.copy(host, 0, staging.segment(), 0, pageBytes); // on the caller's thread (its segment)
        MemorySegment.copy(from, 0, shadowStaging.segment(), ValueLayout.JAVA_LONG, 0, n);
        device.run(() -> {
            layout.slotRuns(n, (offset, floats) -> device.copyToDevice(
                    memory.withByteOffset(pageBytes * page + offset * Float.BYTES), staging, offset * Float.BYTES,
                    floats * Float.BYTES));
            device.copyToDevice(writers.withByteOffset(shadowPageBytes * page), shadowStaging, 0, 8L * n);
            device.sync();
        });
    }

    @Override
    public synchronized long[] writers(int page) {
        checked(page);
        device.run(() -> {
            requireOpen();
            device.copyToHost(shadowStaging, 0, writers.withByteOffset(shadowPageBytes * page), shadowPageBytes);
            device.sync();
        });
        long[] out = new long[layout.pageTokens()];
        MemorySegment.copy(shadowStaging.segment(), ValueLayout.JAVA_LONG, 0, out, 0, out.length);
        return out;
    }

    @Override
    public synchronized void scrubPage(int page) {
        checked(page);
        device.run(() -> {
            requireOpen();
            staging.segment().set(ValueLayout.JAVA_INT, 0, page);
            device.copyToDevice(pageList, staging, 0, 4);
            device.launch("pw_page_scrub", 1, 1, 256, 0, memory, tags, pageBytes / 4, pageList);
            device.zero(writers.withByteOffset(shadowPageBytes * page), shadowPageBytes);
            device.sync();
            long[] t = tag(page);
            setMirror(page, 0, t[1], 0);
        });
    }

    private int checked(int page) {
        if (page < 0 || page >= pages) {
            throw new IndexOutOfBoundsException("page " + page + " outside pool of " + pages);
        }
        return page;
    }

    private void requireOpen() {
        if (closed) {
            throw new IllegalStateException("KV storage is closed");
        }
    }

    CudaDevice device() {
        return device;
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        device.run(() -> {
            closed = true;
            device.sync();
            device.free(memory);
            device.free(tags);
            device.free(stagingDevice);
            device.free(pageList);
            device.free(crcOut);
            device.free(writers);
            device.free(tagMirror);
            device.free(staging);
            device.free(shadowStaging);
        });
        device.release();
    }
}
