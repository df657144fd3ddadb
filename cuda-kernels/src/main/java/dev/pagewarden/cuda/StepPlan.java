package dev.pagewarden.cuda;

import dev.pagewarden.core.backend.SequenceStep;
import dev.pagewarden.core.kv.KvLayout;
import dev.pagewarden.core.kv.PageRef;
import dev.pagewarden.core.model.ModelConfig;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import java.util.TreeSet;

/**
 * The host side of one step, in the exact byte layout of {@code common.cuh}: sequence descriptors
 * (SeqDesc, 24 bytes), the flat page table (TableEntry, 16 bytes), and per token row its sequence and
 * position, plus the rows whose logits are wanted. Built and validated on the host, uploaded in one copy.
 */
final class StepPlan {
    static final int SEQ_BYTES = 24;
    static final int ENTRY_BYTES = 16;
    private static final int ALIGN = 256;

    final int sequences;
    final int rows;
    final int outRows;
    final int tableEntries;
    /** Positions the longest row attends over (sizes the attention kernel's shared memory). */
    final int maxPositions;
    final long[] seqRequest;
    /** Each sequence's cache scope (null: it may read only its own pages). */
    final String[] seqScope;
    final int[] seqStart;
    final int[] seqEnd;
    final int[] seqTableOffset;
    final int[] seqTablePages;
    final int[] tablePage;
    final long[] tableEpoch;
    final int[] rowSeq;
    final int[] rowPos;
    final int[] tokens;
    /** Token row of each wanted logits row, and the batch index it belongs to. */
    final int[] logitRows;
    final int[] logitSeq;
    // byte offsets of each section in the uploaded plan
    final long seqsAt;
    final long tableAt;
    final long rowSeqAt;
    final long rowPosAt;
    final long logitRowsAt;
    final long bytes;

    private StepPlan(List<SequenceStep> batch, KvLayout layout, ModelConfig cfg) {
        sequences = batch.size();
        int r = 0;
        int e = 0;
        int w = 0;
        int maxPos = 0;
        for (SequenceStep s : batch) {
            if (s.endPos() > cfg.seqLen()) {
                throw new IllegalArgumentException("request " + s.requestId() + ": position " + (s.endPos() - 1)
                        + " beyond the model's limit " + cfg.seqLen());
            }
            int need = layout.pagesFor(s.endPos());
            if (s.pageTable().size() < need) {
                throw new IllegalArgumentException("request " + s.requestId() + ": page table has "
                        + s.pageTable().size() + " pages, positions up to " + s.endPos() + " need " + need);
            }
            r += s.tokens().length;
            e += need;
            w += s.wantLogits() ? 1 : 0;
            maxPos = Math.max(maxPos, s.endPos());
        }
        rows = r;
        tableEntries = e;
        outRows = w;
        maxPositions = maxPos;
        seqRequest = new long[sequences];
        seqScope = new String[sequences];
        seqStart = new int[sequences];
        seqEnd = new int[sequences];
        seqTableOffset = new int[sequences];
        seqTablePages = new int[sequences];
        tablePage = new int[tableEntries];
        tableEpoch = new long[tableEntries];
        rowSeq = new int[rows];
        rowPos = new int[rows];
        tokens = new int[rows];
        logitRows = new int[outRows];
        logitSeq = new int[outRows];
        r = 0;
        e = 0;
        w = 0;
        for (int i = 0; i < sequences; i++) {
            SequenceStep s = batch.get(i);
            seqRequest[i] = s.requestId();
            seqScope[i] = s.scope();
            seqStart[i] = s.startPos();
            seqEnd[i] = s.endPos();
            seqTableOffset[i] = e;
            // only the pages this step can touch travel: the kernels never look further
            int need = layout.pagesFor(s.endPos());
            seqTablePages[i] = need;
            for (int p = 0; p < need; p++) {
                PageRef ref = s.pageTable().get(p);
                tablePage[e] = ref.page();
                tableEpoch[e] = ref.epoch();
                e++;
            }
            for (int t = 0; t < s.tokens().length; t++) {
                int token = s.tokens()[t];
                if (token < 0 || token >= cfg.vocabSize()) {
                    throw new IllegalArgumentException("token id " + token + " outside vocabulary of " + cfg.vocabSize());
                }
                rowSeq[r] = i;
                rowPos[r] = s.startPos() + t;
                tokens[r] = token;
                r++;
            }
            if (s.wantLogits()) {
                logitRows[w] = r - 1;
                logitSeq[w] = i;
                w++;
            }
        }
        // the page table last: every other section's offset depends only on the step's shape (sequences,
        // rows, logits rows), so a captured CUDA graph of that shape finds its sections where it left them
        seqsAt = 0;
        rowSeqAt = align(seqsAt + (long) sequences * SEQ_BYTES);
        rowPosAt = align(rowSeqAt + 4L * rows);
        logitRowsAt = align(rowPosAt + 4L * rows);
        tableAt = align(logitRowsAt + 4L * Math.max(1, outRows));
        bytes = align(tableAt + (long) Math.max(1, tableEntries) * ENTRY_BYTES);
    }

    static StepPlan of(List<SequenceStep> batch, KvLayout layout, ModelConfig cfg) {
        if (batch.isEmpty()) {
            throw new IllegalArgumentException("a step needs at least one sequence");
        }
        return new StepPlan(batch, layout, cfg);
    }

    /** Writes the plan at {@code buf}'s position 0 in the device byte order (little-endian). */
    void writeTo(ByteBuffer buf) {
        ByteBuffer b = buf.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < sequences; i++) {
            int at = (int) (seqsAt + (long) i * SEQ_BYTES);
            b.putLong(at, seqRequest[i]);
            b.putInt(at + 8, seqStart[i]);
            b.putInt(at + 12, seqEnd[i]);
            b.putInt(at + 16, seqTableOffset[i]);
            b.putInt(at + 20, seqTablePages[i]);
        }
        for (int i = 0; i < tableEntries; i++) {
            int at = (int) (tableAt + (long) i * ENTRY_BYTES);
            b.putInt(at, tablePage[i]);
            b.putInt(at + 4, 0);
            b.putLong(at + 8, tableEpoch[i]);
        }
        for (int i = 0; i < rows; i++) {
            b.putInt((int) rowSeqAt + 4 * i, rowSeq[i]);
            b.putInt((int) rowPosAt + 4 * i, rowPos[i]);
        }
        for (int i = 0; i < outRows; i++) {
            b.putInt((int) logitRowsAt + 4 * i, logitRows[i]);
        }
    }

    /** Every physical page this step reads or writes (their device tags must be current). */
    /**
     * The reader of each cached prefix page in this step whose scope the page's tag names and whose table
     * expects its epoch: the device tag names that reader as the page's owner for the step, so the kernels'
     * one rule (tag owner == the sequence's request, epochs equal) admits exactly the page's own scope.
     * A page two such readers share in one step gets {@link GpuKvStorage#NO_OWNER}: refused, never guessed
     * (prefill, the one stage with cached pages, steps one sequence at a time).
     */
    java.util.Map<Integer, Long> cachedReaders(dev.pagewarden.core.kv.PageTags tags) {
        java.util.Map<Integer, Long> readers = new java.util.HashMap<>();
        for (int i = 0; i < sequences; i++) {
            if (seqScope[i] == null) {
                continue;
            }
            for (int e = seqTableOffset[i]; e < seqTableOffset[i] + seqTablePages[i]; e++) {
                dev.pagewarden.core.kv.KvPool.PageInfo info = tags.info(tablePage[e]);
                if (info.state() == dev.pagewarden.core.kv.PageState.CACHED && seqScope[i].equals(info.scope())
                        && info.epoch() == tableEpoch[e]) {
                    long reader = seqRequest[i];
                    readers.merge(tablePage[e], reader, (a, b) -> a.equals(b) ? a : GpuKvStorage.NO_OWNER);
                }
            }
        }
        return readers;
    }

    int[] pagesTouched() {
        TreeSet<Integer> pages = new TreeSet<>();
        for (int p : tablePage) {
            pages.add(p);
        }
        return pages.stream().mapToInt(Integer::intValue).toArray();
    }

    /**
     * Written slots the kernel demands of entry {@code entry} of sequence {@code seq}, as
     * {@code KvPool.checkRead} does: positions before startPos must have been written.
     */
    int neededWritten(int seq, int entry, int pageTokens) {
        return Math.min(pageTokens, Math.max(0, seqStart[seq] - entry * pageTokens));
    }

    private static long align(long n) {
        return (n + ALIGN - 1) / ALIGN * ALIGN;
    }
}
