package dev.pagewarden.core.transfer;

import dev.pagewarden.core.kv.KvLayout;
import dev.pagewarden.core.kv.PageRef;
import dev.pagewarden.core.lineage.LineageEvent.Kind;

import java.lang.foreign.MemorySegment;
import java.util.zip.CRC32C;

/**
 * The sender's steps that every transport shares: a source page copied into a host staging buffer
 * and checksummed there, and the lineage record of the bytes leaving the prefill pool.
 */
public final class PageStaging {
    private PageStaging() {
    }

    /**
     * Copies page {@code index} of {@code job} out of its source pool into {@code staging} (at least a
     * page long) and returns it as a frame: its token count, the CRC32C of the staged bytes, the
     * source page's writer shadow. The frame's bytes are {@code staging} itself, so they are valid
     * until the buffer is reused.
     */
    public static PageFrame stage(TransferJob job, int index, MemorySegment staging) {
        KvLayout layout = job.source().layout();
        PageRef src = job.sourcePages().get(index);
        MemorySegment page = staging.asSlice(0, layout.pageBytes());
        job.source().storage().readPage(src.page(), page);
        long[] writers = job.source().storage().writers(src.page());
        int tokens = Math.min(layout.pageTokens(), job.tokens() - index * layout.pageTokens());
        return new PageFrame(job.requestId(), job.generation(), index, tokens, crc32c(page), page, writers, src,
                job.source().name());
    }

    /** Lineage: the frame's bytes left the source pool, whether or not the receiver then takes them. */
    public static void recordSent(TransferJob job, PageFrame frame) {
        job.source().lineage().transfer(Kind.TRANSFER_OUT, frame.source().page(), frame.source().epoch(), job.requestId(),
                job.tenant(), frame.tokens(), null, -1, -1, job.generation(), frame.crc32c());
    }

    public static int crc32c(MemorySegment bytes) {
        CRC32C crc = new CRC32C();
        crc.update(bytes.asByteBuffer());
        return (int) crc.getValue();
    }
}
