package dev.pagewarden.core.backend.cpu;

import dev.pagewarden.core.backend.Backend;
import dev.pagewarden.core.kv.KvStorage;
import dev.pagewarden.core.backend.SequenceStep;
import dev.pagewarden.core.kv.KvLayout;
import dev.pagewarden.core.kv.PageTags;
import dev.pagewarden.core.kv.ReadCheck;
import dev.pagewarden.core.kv.PageRef;
import dev.pagewarden.core.model.ModelConfig;
import dev.pagewarden.core.model.RopeTables;
import dev.pagewarden.core.tensor.MatMul;
import dev.pagewarden.core.tensor.Matrix;
import dev.pagewarden.core.tensor.Ops;
import dev.pagewarden.core.tensor.Parallel;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The Llama-family forward pass (llama, qwen2, qwen3) on the CPU, over a batch of sequences whose tokens are stacked into one
 * matrix so that every weight row is read once per step. Per token, the arithmetic is the same
 * whatever else is in the batch (the kernels guarantee it for matmuls; attention and the small ops
 * run per token), which makes the output batch-invariant.
 */
public final class CpuBackend implements Backend {
    private final ResidentWeights w;
    private final ModelConfig cfg;
    private final Parallel pool;
    /** Shared by every backend on the same cores: steps of prefill and decode take turns. */
    private final ReentrantLock computeLock;
    private final float[] ropeCos;
    private final float[] ropeSin;
    private Scratch scratch = new Scratch(0, 0);

    CpuBackend(ResidentWeights weights, Parallel pool, ReentrantLock computeLock) {
        this.w = weights;
        this.cfg = weights.config();
        this.pool = pool;
        this.computeLock = computeLock;
        RopeTables rope = RopeTables.of(cfg);
        this.ropeCos = rope.cos();
        this.ropeSin = rope.sin();
    }

    @Override
    public String name() {
        return "cpu";
    }

    @Override
    public ModelConfig config() {
        return cfg;
    }

    @Override
    public KvStorage allocateKv(KvLayout layout, int pages) {
        layout.requireFits(cfg);
        // head panels: attention reads each head's K (and V) of a page as one sequential run, and
        // scores the page's slots as fma chains across lanes, with no lane reduction
        return new CpuKvStorage(layout.in(KvLayout.Order.HEAD_PANELS), pages);
    }

    /** Activations of one step, grown on demand and reused (a backend runs one step at a time). */
    private record Scratch(int tokens, int outRows, float[] x, float[] xb, float[] q, float[] k, float[] v,
                           float[] att, float[] hb, float[] hb2, float[] xo, float[] logitsIn, float[] logitsOut) {
        Scratch(int tokens, int outRows) {
            this(tokens, outRows, null, null, null, null, null, null, null, null, null, null, null);
        }

        static Scratch of(ModelConfig c, int tokens, int outRows) {
            return new Scratch(tokens, outRows, new float[tokens * c.dim()], new float[tokens * c.dim()],
                    new float[tokens * c.qDim()], new float[tokens * c.kvDim()], new float[tokens * c.kvDim()],
                    new float[tokens * c.qDim()], new float[tokens * c.hiddenDim()], new float[tokens * c.hiddenDim()],
                    new float[tokens * c.dim()], new float[outRows * c.dim()], new float[outRows * c.vocabSize()]);
        }
    }

    @Override
    public ReadCheck[] forward(List<SequenceStep> batch, KvStorage storage, PageTags tags, float[][] logits) {
        if (!(storage instanceof CpuKvStorage kv)) {
            throw new IllegalArgumentException("KV storage of another backend: " + storage);
        }
        computeLock.lock();
        try {
            run(batch, kv, logits);
        } finally {
            computeLock.unlock();
        }
        ReadCheck[] ran = new ReadCheck[batch.size()];
        Arrays.fill(ran, ReadCheck.CLEAN);
        return ran;
    }

    private void run(List<SequenceStep> batch, CpuKvStorage kv, float[][] logits) {
        int dim = cfg.dim();
        int qDim = cfg.qDim();
        int kvDim = cfg.kvDim();
        int total = 0;
        int wanted = 0;
        for (SequenceStep s : batch) {
            if (s.endPos() > cfg.seqLen()) {
                throw new IllegalArgumentException("request " + s.requestId() + ": position " + (s.endPos() - 1)
                        + " beyond the model's limit " + cfg.seqLen());
            }
            int pagesNeeded = kv.layout().pagesFor(s.endPos());
            if (s.pageTable().size() < pagesNeeded) {
                throw new IllegalArgumentException("request " + s.requestId() + ": page table has "
                        + s.pageTable().size() + " pages, positions up to " + s.endPos() + " need " + pagesNeeded);
            }
            total += s.tokens().length;
            wanted += s.wantLogits() ? 1 : 0;
        }
        if (scratch.tokens < total || scratch.outRows < wanted) {
            scratch = Scratch.of(cfg, Math.max(total, scratch.tokens), Math.max(wanted, scratch.outRows));
        }
        Scratch s = scratch;
        // Token rows: which sequence and position each stacked row belongs to.
        int[] rowSeq = new int[total];
        int[] rowPos = new int[total];
        int r = 0;
        for (int i = 0; i < batch.size(); i++) {
            SequenceStep step = batch.get(i);
            for (int t = 0; t < step.tokens().length; t++) {
                int token = step.tokens()[t];
                if (token < 0 || token >= cfg.vocabSize()) {
                    throw new IllegalArgumentException("token id " + token + " outside vocabulary of " + cfg.vocabSize());
                }
                w.tokenEmbedding().rowInto(token, s.x, r * dim);
                rowSeq[r] = i;
                rowPos[r] = step.startPos() + t;
                r++;
            }
        }
        final int rows = total;
        int hs = cfg.headSize();
        for (int l = 0; l < cfg.nLayers(); l++) {
            ResidentWeights.Layer layer = w.layers().get(l);
            boolean ffnResidual = l > 0; // the previous layer's feed-forward output, not yet added
            // attention block
            // per-token work is spread over the kernel threads too: on two cores a serial stretch
            // idles half the machine (so the residual adds happen here, per token, not in a serial pass)
            pool.forRange(rows, (a, b) -> {
                for (int t = a; t < b; t++) {
                    if (ffnResidual) {
                        Ops.add(s.x, t * dim, s.xo, t * dim, dim);
                    }
                    Ops.rmsnorm(s.xb, t * dim, s.x, t * dim, layer.rmsAtt(), dim, cfg.rmsEps());
                }
            });
            MatMul.matmul(pool, new Matrix[] {layer.wq(), layer.wk(), layer.wv()}, s.xb, rows,
                    new float[][] {s.q, s.k, s.v});
            final int layerIndex = l;
            pool.forRange(rows, (a, b) -> {
                for (int t = a; t < b; t++) {
                    if (layer.bq() != null) {
                        Ops.add(s.q, t * qDim, layer.bq(), 0, qDim);
                        Ops.add(s.k, t * kvDim, layer.bk(), 0, kvDim);
                        Ops.add(s.v, t * kvDim, layer.bv(), 0, kvDim);
                    }
                    if (layer.qNorm() != null) {
                        for (int o = t * qDim; o < (t + 1) * qDim; o += hs) {
                            Ops.rmsnorm(s.q, o, s.q, o, layer.qNorm(), hs, cfg.rmsEps());
                        }
                        for (int o = t * kvDim; o < (t + 1) * kvDim; o += hs) {
                            Ops.rmsnorm(s.k, o, s.k, o, layer.kNorm(), hs, cfg.rmsEps());
                        }
                    }
                    rope(s.q, t * qDim, qDim, rowPos[t]);
                    rope(s.k, t * kvDim, kvDim, rowPos[t]);
                    // K/V of every token in this step land in the pages before anyone attends.
                    PageRef ref = batch.get(rowSeq[t]).pageTable().get(rowPos[t] / kv.layout().pageTokens());
                    int slot = rowPos[t] % kv.layout().pageTokens();
                    long base = kv.pageBase(ref.page());
                    kv.noteWriter(ref.page(), slot, batch.get(rowSeq[t]).requestId());
                    for (int head = 0; head < kv.layout().kvHeads(); head++) {
                        int from = t * kvDim + head * hs;
                        kv.put(base + kv.layout().offset(layerIndex, 0, slot, head), kv.layout().elementStride(0), s.k,
                                from, hs);
                        kv.put(base + kv.layout().offset(layerIndex, 1, slot, head), kv.layout().elementStride(1), s.v,
                                from, hs);
                    }
                }
            });
            // Work units are (token, pair of heads): attend's V sweep takes two heads at a time. A
            // chunk is a run of units, so per token one contiguous range of heads (all of a token's
            // heads when there are many tokens, a pair or two each when a single token would
            // otherwise leave a core idle).
            int pair = cfg.nHeads() % 2 == 0 ? 2 : 1;
            int units = cfg.nHeads() / pair;
            pool.forRange(rows * units, (start, end) -> {
                for (int tu = start; tu < end; ) {
                    int t = tu / units;
                    int u0 = tu % units;
                    int u1 = Math.min(units, u0 + (end - tu));
                    attend(kv, batch.get(rowSeq[t]).pageTable(), layerIndex, rowPos[t], u0 * pair, u1 * pair, s.q,
                            t * qDim, s.att, t * qDim);
                    tu += u1 - u0;
                }
            });
            MatMul.matmul(pool, layer.wo(), s.att, rows, s.xo);
            // feed-forward block
            pool.forRange(rows, (a, b) -> {
                for (int t = a; t < b; t++) {
                    Ops.add(s.x, t * dim, s.xo, t * dim, dim);
                    Ops.rmsnorm(s.xb, t * dim, s.x, t * dim, layer.rmsFfn(), dim, cfg.rmsEps());
                }
            });
            MatMul.swiglu(pool, layer.w1(), layer.w3(), s.xb, rows, s.hb, s.hb2);
            MatMul.matmul(pool, layer.w2(), s.hb, rows, s.xo);
        }
        Ops.add(s.x, 0, s.xo, 0, rows * dim); // the last layer's feed-forward output
        // Classifier only for the last token of sequences that asked for logits.
        int out = 0;
        int last = -1;
        for (SequenceStep step : batch) {
            last += step.tokens().length;
            if (step.wantLogits()) {
                Ops.rmsnorm(s.logitsIn, out * dim, s.x, last * dim, w.rmsFinal(), dim, cfg.rmsEps());
                out++;
            }
        }
        if (out == 0) {
            return;
        }
        MatMul.matmul(pool, w.classifier(), s.logitsIn, out, s.logitsOut);
        int o = 0;
        for (int i = 0; i < batch.size(); i++) {
            if (batch.get(i).wantLogits()) {
                System.arraycopy(s.logitsOut, o * cfg.vocabSize(), logits[i], 0, cfg.vocabSize());
                o++;
            }
        }
    }

    /**
     * RoPE of each head: on adjacent pairs (v[2i], v[2i+1]) as llama2.c and llama.cpp's llama do, or on
     * halves (v[i], v[i + half]) for the NEOX layout of the Qwen models; pair i turns by the same angle
     * either way.
     */
    private void rope(float[] v, int offset, int width, int pos) {
        int hs = cfg.headSize();
        int half = hs / 2;
        int table = pos * half;
        if (cfg.architecture().neoxRope()) {
            for (int head = offset; head < offset + width; head += hs) {
                for (int pair = 0; pair < half; pair++) {
                    float c = ropeCos[table + pair];
                    float sn = ropeSin[table + pair];
                    int i = head + pair;
                    float a = v[i];
                    float b = v[i + half];
                    v[i] = a * c - b * sn;
                    v[i + half] = a * sn + b * c;
                }
            }
            return;
        }
        // head by head, so the pair index needs no division per element (it cost ~2% of a batch-8 step)
        for (int head = offset; head < offset + width; head += hs) {
            for (int pair = 0; pair < half; pair++) {
                float c = ropeCos[table + pair];
                float sn = ropeSin[table + pair];
                int i = head + 2 * pair;
                float a = v[i];
                float b = v[i + 1];
                v[i] = a * c - b * sn;
                v[i + 1] = a * sn + b * c;
            }
        }
    }

    /** Per-thread attention scratch: scores of the heads in hand, the K panels to score (offset, query, output). */
    private static final class AttentionScratch {
        float[] scores = new float[0];
        long[] offs = new long[0];
        int[] qos = new int[0];
        int[] outs = new int[0];
        long[] bases = new long[0];
    }

    private static final ThreadLocal<AttentionScratch> SCRATCH = ThreadLocal.withInitial(AttentionScratch::new);

    /**
     * Query heads [h0, h1) of one token attend over positions 0..pos of its own sequence, reading K
     * and V straight from its pages (no copy).
     *
     * <p>The pages hold head panels ({@link KvLayout.Order#HEAD_PANELS}): a head's K of one page
     * is one contiguous 4 KB run (at the defaults) with each dimension of the page's sixteen slots
     * in one vector, and its V one run of sixteen vectors. Once the weights of a step have pushed
     * the KV out of the caches, every run starts with cache misses that the hardware prefetchers
     * do not cover (they stop at 4 KB boundaries), so attention waits on memory latency more than
     * on bandwidth, and the loops keep several runs in flight: the scores of eight K panels (four
     * pages of two heads) are computed side by side; V, whose output accumulates over positions in
     * order, goes page by page, two heads at a time (docs/benchmarks.md). A score is one fma chain
     * over the dimensions, as a panel matmul row is (no lane reduction), and each output element
     * gets a multiply and an add per position in position order, so the bits do not depend on how
     * the work is split.
     */
    private void attend(CpuKvStorage kv, List<PageRef> pages, int layer, int pos, int h0, int h1,
                        float[] q, int qOffset, float[] out, int outOffset) {
        KvLayout layout = kv.layout();
        int hs = cfg.headSize();
        int n = pos + 1;
        int pt = layout.pageTokens();
        long stride = (long) layout.slotStride(1) * Float.BYTES; // V rows
        AttentionScratch scratch = SCRATCH.get();
        if (scratch.scores.length < (h1 - h0) * n) {
            scratch.scores = new float[(h1 - h0) * cfg.seqLen()];
        }
        float[] scores = scratch.scores;
        float scale = (float) (1.0 / Math.sqrt(hs));
        int pageCount = layout.pagesFor(n);
        if (scratch.bases.length < pageCount) {
            scratch.bases = new long[layout.pagesFor(cfg.seqLen())];
        }
        long[] bases = scratch.bases;
        for (int p = 0; p < pageCount; p++) {
            bases[p] = kv.pageBase(pages.get(p).page()) * Float.BYTES;
        }
        int full = n / pt;
        // K of the full pages: four pages at a time, head after head (in each page a head's panel
        // follows the previous head's, so the streams in flight continue in address order), fed
        // to the score kernel eight panels at a time; then the last, partial page
        int runs = full * (h1 - h0);
        if (scratch.offs.length < runs) {
            scratch.offs = new long[runs + 64];
            scratch.qos = new int[runs + 64];
            scratch.outs = new int[runs + 64];
        }
        int r = 0;
        for (int page = 0; page < full; page += 4) {
            int quad = Math.min(4, full - page);
            for (int h = h0; h < h1; h++) {
                long k = layout.offset(layer, 0, 0, h / cfg.kvMul()) * Float.BYTES;
                for (int g = 0; g < quad; g++, r++) {
                    scratch.offs[r] = bases[page + g] + k;
                    scratch.qos[r] = qOffset + h * hs;
                    scratch.outs[r] = (h - h0) * n + (page + g) * pt;
                }
            }
        }
        for (int at = 0; at < runs; at += Ops.SCORE_RUNS) {
            int count = Math.min(Ops.SCORE_RUNS, runs - at);
            Ops.panelScoresN(q, scratch.qos, kv.memory, scratch.offs, at, count, pt, hs, scores, scratch.outs);
        }
        if (full < pageCount) {
            for (int h = h0; h < h1; h++) {
                long k = layout.offset(layer, 0, 0, h / cfg.kvMul()) * Float.BYTES;
                Ops.panelScores(q, qOffset + h * hs, kv.memory, bases[full] + k, pt, n - full * pt, hs, scores,
                        (h - h0) * n + full * pt);
            }
        }
        for (int h = h0; h < h1; h++) {
            int si = (h - h0) * n;
            for (int p = 0; p < n; p++) {
                scores[si + p] *= scale;
            }
            Ops.softmax(scores, si, n);
            Arrays.fill(out, outOffset + h * hs, outOffset + (h + 1) * hs, 0f);
        }
        for (int p = 0; p < pageCount; p++) {
            int slots = Math.min(pt, n - p * pt);
            int h = h0;
            for (; h + 2 <= h1; h += 2) {
                long a = bases[p] + layout.offset(layer, 1, 0, h / cfg.kvMul()) * Float.BYTES;
                long b = bases[p] + layout.offset(layer, 1, 0, (h + 1) / cfg.kvMul()) * Float.BYTES;
                Ops.axpyKvRows2(out, outOffset + h * hs, outOffset + (h + 1) * hs, scores, (h - h0) * n + p * pt,
                        (h + 1 - h0) * n + p * pt, kv.memory, a, b, stride, slots, hs);
            }
            if (h < h1) {
                long at = bases[p] + layout.offset(layer, 1, 0, h / cfg.kvMul()) * Float.BYTES;
                Ops.axpyKvRows(out, outOffset + h * hs, scores, (h - h0) * n + p * pt, kv.memory, at, stride, slots, hs);
            }
        }
    }

    @Override
    public void close() {
        // weights belong to the LoadedModel; the kernel pool belongs to the provider's caller
    }
}
