package dev.pagewarden.cuda;

import dev.pagewarden.core.backend.Backend;
import dev.pagewarden.core.kv.KvStorage;
import dev.pagewarden.core.backend.SequenceStep;
import dev.pagewarden.core.kv.KvLayout;
import dev.pagewarden.core.kv.PageTags;
import dev.pagewarden.core.kv.ReadCheck;
import dev.pagewarden.core.model.DType;
import dev.pagewarden.core.model.LlamaWeights;
import dev.pagewarden.core.model.ModelConfig;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUevent;
import jcuda.driver.CUgraph;
import jcuda.driver.CUgraphExec;
import jcuda.driver.CUstreamCaptureMode;
import jcuda.driver.JCudaDriver;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.TreeMap;

/**
 * The Llama forward step on the GPU. Semantics are the CPU backend's: the step guard has checked each
 * sequence's reads against the pool before the step; the logits of the last token of each sequence
 * that wants them come back, and the KV append writes each row's request id into the writer shadow
 * beside its K/V. On the device the kernels check every page again against its owner tag (the
 * pool's metadata as {@link PageTags} shows it); a sequence whose page fails there gets a refusing
 * verdict ("detected on the device") and no logits.
 *
 * <p>Batch invariance: every kernel computes a token row (or a (row, head) pair, or an output element
 * of a row) with a fixed launch shape and a fixed reduction order that do not depend on the batch.
 */
public final class GpuBackend implements Backend {
    private static final System.Logger LOG = System.getLogger(GpuBackend.class.getName());
    private static final int MATVEC_BLOCK = 256;
    /** Row kernels (RMSNorm, KV append) run one block per token row: the widest block, so each thread has few elements (a row's latency, not its bytes, is their cost). */
    private static final int ROW_BLOCK = 1024;
    private static final int ATT_BLOCK = 128;

    /**
     * -Dpagewarden.gpu.matvec1=true: a step of one token row uses the batch-1 kernels (Q/K/V in one
     * launch, residual adds and SwiGLU in the matvec epilogues). Off by default until the device check
     * has run them (parity, decode-step invariance against the tiled kernels).
     */
    private static final boolean SINGLE_ROW_MATVEC = Boolean.getBoolean("pagewarden.gpu.matvec1");

    /**
     * -Dpagewarden.gpu.attentionRows=true: in a step with more token rows than sequences (a prefill chunk),
     * attention takes up to 8 rows of a sequence a block ({@code pw_attention_rows}) and reads each K and V
     * row once for all of them instead of once per query row. Each row's operations are pw_attention's in
     * the same order, so the logits are bit-identical; off by default until the device check has compared them.
     */
    static final String ATTENTION_ROWS_PROPERTY = "pagewarden.gpu.attentionRows";
    private static final boolean ATTENTION_ROWS = Boolean.getBoolean(ATTENTION_ROWS_PROPERTY);
    /** Shared memory a grouped attention block may take: 48 KiB leaves room for several blocks a multiprocessor. */
    private static final long ATTENTION_ROWS_SHARED = 48 * 1024;
    /** The kernel's PW_ATT_ROWS_MAX. */
    private static final int ATTENTION_ROWS_MAX = 8;

    /**
     * -Dpagewarden.gpu.fusedRope=true: RoPE rotates K inside the KV append and Q as the attention loads
     * it, and {@code pw_rope} does not run. The same float operations on the same pairs, so the logits
     * are bit-identical to the unfused path; off by default until the device check has compared them.
     */
    private boolean fusedRope = Boolean.getBoolean("pagewarden.gpu.fusedRope");
    /**
     * -Dpagewarden.gpu.graphs=true: a step's kernels are captured once per step shape into a CUDA graph
     * and replayed for later steps of that shape (one launch instead of one per kernel). Off by default
     * until the device check has compared the logits with and without.
     */
    private boolean graphs = Boolean.getBoolean("pagewarden.gpu.graphs");
    /** Captured steps kept per backend (-Dpagewarden.gpu.graphCache, default 32), least recently used evicted. */
    private static final int GRAPH_CACHE = Integer.getInteger("pagewarden.gpu.graphCache", 32);
    private final GraphCache<GraphKey, CUgraphExec> graphCache = new GraphCache<>(GRAPH_CACHE,
            JCudaDriver::cuGraphExecDestroy);
    /** Graphs captured over this backend's life (device thread only). */
    private int captures;
    /** Shapes that ran once without a graph: the second step of a shape captures it. */
    private final GraphCache<GraphKey, Boolean> shapesSeen = new GraphCache<>(4 * GRAPH_CACHE, seen -> { });
    /** Per-head Q/K RMSNorm (qwen3): one block per (token row, head) over headSize values. */
    private static final int HEAD_NORM_BLOCK = 128;
    /**
     * -Dpagewarden.gpu.gemm=true: F16 and BF16 matrices are uploaded in fragment order and multiplied by
     * the tensor-core kernels (gemm.cuh) for every row count - one accumulation order whatever the batch;
     * the RMSNorm before Q/K/V and before w1/w3 moves into their prologue, the residual adds and SwiGLU
     * into their epilogues. Activations are rounded to f16/bf16 on the way in, so logits differ from the
     * CPU's by about 1e-3 relative instead of 1e-6. Off by default until the device check has run it.
     */
    public static final String GEMM_PROPERTY = "pagewarden.gpu.gemm";
    public static final boolean GEMM = Boolean.getBoolean(GEMM_PROPERTY);

    private final CudaDevice device;
    private final DeviceWeights weights;
    private final LlamaWeights hostWeights;
    private final ModelConfig cfg;
    private final Runnable onClose;
    private Scratch scratch;
    private boolean closed;
    /** With -Dpagewarden.gpu.timing=true: where step time goes (host enqueue vs waiting for the GPU), printed at close. */
    private final StepTiming timing = Boolean.getBoolean("pagewarden.gpu.timing") ? new StepTiming() : null;
    /** With -Dpagewarden.gpu.kernelTiming=true: each kernel of each step timed with CUDA events (graphs then stay off). */
    private final KernelTiming kernelTiming = Boolean.getBoolean("pagewarden.gpu.kernelTiming") ? new KernelTiming() : null;

    GpuBackend(CudaDevice device, DeviceWeights weights, LlamaWeights hostWeights, Runnable onClose) {
        this.device = device;
        this.weights = weights;
        this.hostWeights = hostWeights;
        this.cfg = hostWeights.config();
        this.onClose = onClose;
    }

    @Override
    public String name() {
        return "gpu";
    }

    @Override
    public ModelConfig config() {
        return cfg;
    }

    @Override
    public KvStorage allocateKv(KvLayout layout, int pages) {
        layout.requireFits(cfg);
        // the kernels address slot-major rows (attention.cu)
        return new GpuKvStorage(device, layout.in(KvLayout.Order.SLOT_MAJOR), pages);
    }

    /**
     * The device memory free now (after the weights and any pool allocated before), less two steps'
     * activations and a safety margin, times {@code share}, in whole pages ({@link KvSizing}). Logged.
     */
    @Override
    public long suggestedKvBytes(KvLayout layout, int stepRows, double share) {
        long[] mem = device.call(device::memoryInfo);
        KvSizing s = KvSizing.of(mem[0], mem[1], cfg, layout, stepRows, share);
        if (s.pages() == 0) {
            throw new IllegalStateException("the GPU's free memory cannot hold a KV pool: " + s.describe()
                    + "; lower max batch or the prefill chunk, or size the pools explicitly");
        }
        LOG.log(System.Logger.Level.INFO, "KV pool from GPU memory (share {0}): {1}", share, s.describe());
        return s.kvBytes();
    }

    /** Turns CUDA graphs on or off for the following steps (the device check compares both on one model). */
    void graphs(boolean on) {
        device.run(() -> graphs = on);
    }

    /**
     * Graphs captured since this backend was made (for the device check): a count, not the cache's size,
     * since a step plan that outgrows the scratch buffers drops every graph held so far.
     */
    int capturedGraphs() {
        return device.call(() -> captures);
    }

    /** Turns the fused RoPE on or off for the following steps (the device check compares both on one model). */
    void fusedRope(boolean on) {
        device.run(() -> fusedRope = on);
    }

    /** Device name, compute capability and which kernel image runs (for logs and the device check). */
    public String describe() {
        return device.name() + " (compute " + device.computeMajor() + "." + device.computeMinor() + ", driver CUDA "
                + CudaRequirements.versionText(device.driverVersion()) + ", " + (device.usesCubin() ? "sm_90 cubin" : "PTX")
                + ", launches " + device.launchPath() + (SINGLE_ROW_MATVEC ? ", batch-1 matvec kernels" : "")
                + (fusedRope ? ", fused RoPE" : "") + (ATTENTION_ROWS ? ", prefill attention by row groups" : "")
                + (kernelTiming != null ? ", every kernel timed (no graphs)" : "") + (graphs ? ", CUDA graphs" : "")
                + (GEMM ? ", tensor-core gemm (mma.sync) for F16/BF16 matrices at every batch size" : "")
                + ", weights " + weights.bytes / (1 << 20) + " MiB)";
    }

    @Override
    public ReadCheck[] forward(List<SequenceStep> batch, KvStorage storage, PageTags tags, float[][] logits) {
        if (!(storage instanceof GpuKvStorage kv) || kv.device() != device) {
            throw new IllegalArgumentException("KV storage of another backend: " + storage);
        }
        if (logits.length < batch.size()) {
            throw new IllegalArgumentException("logits has " + logits.length + " rows for " + batch.size() + " sequences");
        }
        ReadCheck[] checks = new ReadCheck[batch.size()];
        Arrays.fill(checks, ReadCheck.CLEAN);
        if (batch.isEmpty()) {
            return checks;
        }
        StepPlan plan = StepPlan.of(batch, kv.layout(), cfg);
        int[] flags = device.call(() -> run(plan, tags, kv, logits));
        for (int j = 0; j < batch.size(); j++) {
            int code = flags[2 * j];
            if (code != 0) {
                int page = flags[2 * j + 1];
                ReadCheck.Violation type = code == 2 ? ReadCheck.Violation.UNWRITTEN_SLOT_READ
                        : ReadCheck.Violation.OWNER_TAG_MISMATCH;
                long epoch = -1;
                for (int e = plan.seqTableOffset[j]; e < plan.seqTableOffset[j] + plan.seqTablePages[j]; e++) {
                    if (plan.tablePage[e] == page) {
                        epoch = plan.tableEpoch[e];
                    }
                }
                checks[j] = new ReadCheck(type, page, epoch, "detected on the device: page " + page
                        + " does not match its owner tag for request " + plan.seqRequest[j] + " (kernel code " + code + ")");
            }
        }
        return checks;
    }

    /** Buffers of one step, grown on demand (a backend runs one step at a time, on the device thread). */
    private static final class Scratch {
        final int rows;
        final int outRows;
        final int seqs;
        final long planBytes;
        final CUdeviceptr x, xb, q, k, v, att, hb, hb2, xo, logitsIn, logitsOut, plan, flags, invRms;
        final CudaDevice.Pinned up;
        final CudaDevice.Pinned down;
        final long xUpAt;

        Scratch(CudaDevice d, ModelConfig c, int rows, int outRows, int seqs, long planBytes) {
            this.rows = rows;
            this.outRows = outRows;
            this.seqs = seqs;
            this.planBytes = planBytes;
            long f = Float.BYTES;
            x = d.alloc(f * rows * c.dim());
            xb = d.alloc(f * rows * c.dim());
            q = d.alloc(f * rows * c.qDim());
            k = d.alloc(f * rows * c.kvDim());
            v = d.alloc(f * rows * c.kvDim());
            att = d.alloc(f * rows * c.qDim());
            hb = d.alloc(f * rows * c.hiddenDim());
            hb2 = d.alloc(f * rows * c.hiddenDim());
            xo = d.alloc(f * rows * c.dim());
            logitsIn = d.alloc(f * outRows * c.dim());
            logitsOut = d.alloc(f * outRows * c.vocabSize());
            plan = d.alloc(planBytes);
            flags = d.alloc(8L * seqs);
            invRms = d.alloc(f * rows);
            xUpAt = (planBytes + 255) / 256 * 256;
            up = d.pinned(xUpAt + f * rows * c.dim());
            down = d.pinned(f * outRows * c.vocabSize() + 8L * seqs);
        }

        boolean fits(int rows, int outRows, int seqs, long planBytes) {
            return this.rows >= rows && this.outRows >= outRows && this.seqs >= seqs && this.planBytes >= planBytes;
        }

        void free(CudaDevice d) {
            d.sync();
            for (CUdeviceptr p : new CUdeviceptr[] {x, xb, q, k, v, att, hb, hb2, xo, logitsIn, logitsOut, plan, flags, invRms}) {
                d.free(p);
            }
            d.free(up);
            d.free(down);
        }
    }

    /** One step on the device thread; returns the per-sequence flags {code, page}. */
    private int[] run(StepPlan plan, PageTags tags, GpuKvStorage kv, float[][] logits) {
        if (closed) {
            throw new IllegalStateException("GPU backend is closed");
        }
        int dim = cfg.dim();
        int rows = plan.rows;
        long attShared = (long) (plan.maxPositions + cfg.headSize()) * Float.BYTES;
        if (attShared > device.maxSharedBytes()) {
            throw new IllegalArgumentException("attention over " + plan.maxPositions + " positions needs " + attShared
                    + " bytes of shared memory; this GPU allows " + device.maxSharedBytes());
        }
        if (scratch == null || !scratch.fits(rows, plan.outRows, plan.sequences, plan.bytes)) {
            int r = Math.max(rows, scratch == null ? 0 : scratch.rows);
            int o = Math.max(Math.max(1, plan.outRows), scratch == null ? 0 : scratch.outRows);
            int s = Math.max(plan.sequences, scratch == null ? 0 : scratch.seqs);
            long oldPlan = scratch == null ? 0 : scratch.planBytes;
            // the plan grows with the page tables, a page at a time: doubling keeps the regrowths (and the
            // captured graphs each one throws away) few
            long b = plan.bytes > oldPlan ? Math.max(plan.bytes, 2 * oldPlan) : oldPlan;
            if (scratch != null) {
                graphCache.clear(); // they read the old buffers
                shapesSeen.clear();
                scratch.free(device);
            }
            scratch = null;
            scratch = new Scratch(device, cfg, r, o, s, b);
        }
        Scratch s = scratch;
        boolean check = tags.checksOn();
        if (check) {
            kv.syncTags(tags, plan.pagesTouched(), plan.cachedReaders(tags));
        }
        long t0 = System.nanoTime();
        // plan and embedding rows go up in one copy
        plan.writeTo(s.up.buffer());
        float[] row = new float[dim];
        for (int r = 0; r < rows; r++) {
            hostWeights.tokenEmbedding().rowInto(plan.tokens[r], row, 0);
            MemorySegment.copy(row, 0, s.up.segment(), ValueLayout.JAVA_FLOAT, s.xUpAt + 4L * r * dim, dim);
        }
        device.copyToDevice(s.plan, s.up, 0, plan.bytes);
        device.copyToDevice(s.x, s.up, s.xUpAt, 4L * rows * dim);
        device.zero(s.flags, 8L * plan.sequences);
        if (timing != null) {
            timing.start(device);
        }
        int checkFlag = check ? 1 : 0;
        if (kernelTiming != null) {
            kernelTiming.begin();
            device.timeKernels(kernelTiming);
            try {
                kernels(plan, s, kv, checkFlag, attShared);
            } finally {
                device.timeKernels(null);
            }
        } else if (!replayGraph(plan, s, kv, checkFlag)) {
            kernels(plan, s, kv, checkFlag, attShared);
        }
        long logitBytes = 4L * plan.outRows * cfg.vocabSize();
        if (plan.outRows > 0) {
            device.copyToHost(s.down, 0, s.logitsOut, logitBytes);
        }
        device.copyToHost(s.down, logitBytes, s.flags, 8L * plan.sequences);
        if (timing != null) {
            timing.stop(device);
        }
        long t1 = System.nanoTime();
        device.sync();
        if (kernelTiming != null) {
            kernelTiming.stepDone(rows);
        }
        if (timing != null) {
            timing.add(rows, t1 - t0, System.nanoTime() - t1);
        }
        int[] flags = new int[2 * plan.sequences];
        MemorySegment.copy(s.down.segment(), ValueLayout.JAVA_INT, logitBytes, flags, 0, flags.length);
        for (int o = 0; o < plan.outRows; o++) {
            int seq = plan.logitSeq[o];
            if (flags[2 * seq] == 0) {
                MemorySegment.copy(s.down.segment(), ValueLayout.JAVA_FLOAT, 4L * o * cfg.vocabSize(),
                        logits[seq], 0, cfg.vocabSize());
            }
        }
        return flags;
    }

    /**
     * Token rows one attention block takes: 1 (pw_attention) unless attention rows are on and the step has
     * more rows than sequences (a prompt's rows, which share their K and V); then as many as fit
     * {@link #ATTENTION_ROWS_SHARED} bytes of scores and queries, at most 8 (the kernel's register arrays).
     * It changes which rows share a block and nothing of any row's arithmetic.
     */
    static int attentionGroup(boolean on, int rows, int sequences, long attShared, long maxShared) {
        if (!on || rows <= sequences) {
            return 1;
        }
        long fit = Math.min(ATTENTION_ROWS_SHARED, maxShared) / attShared;
        return (int) Math.max(1, Math.min(ATTENTION_ROWS_MAX, fit));
    }

    private int attentionGroup(StepPlan plan, long attShared) {
        return attentionGroup(ATTENTION_ROWS, plan.rows, plan.sequences, attShared, device.maxSharedBytes());
    }

    /**
     * The step's kernels, in order, on the stream (launched, or captured into a graph): the layers, then
     * the final norm and the classifier for the rows that want logits. Reads the plan and the embedding
     * rows from the scratch, writes K/V into the pages, the logits into {@code s.logitsOut}.
     */
    private void kernels(StepPlan plan, Scratch s, GpuKvStorage kv, int checkFlag, long attShared) {
        int dim = cfg.dim();
        int kvDim = cfg.kvDim();
        int qDim = cfg.qDim();
        int hs = cfg.headSize();
        int neox = cfg.architecture().neoxRope() ? 1 : 0;
        int rows = plan.rows;
        CUdeviceptr seqs = s.plan.withByteOffset(plan.seqsAt);
        CUdeviceptr table = s.plan.withByteOffset(plan.tableAt);
        CUdeviceptr rowSeq = s.plan.withByteOffset(plan.rowSeqAt);
        CUdeviceptr rowPos = s.plan.withByteOffset(plan.rowPosAt);
        int pageTokens = kv.layout().pageTokens();
        // one token row (and the experiment on): Q, K, V in one launch, adds and SwiGLU in the epilogues
        boolean one = rows == 1 && SINGLE_ROW_MATVEC;
        for (int l = 0; l < cfg.nLayers(); l++) {
            DeviceWeights.Layer w = weights.layers.get(l);
            DeviceWeights.Matrix[] qkv = {w.wq(), w.wk(), w.wv()};
            if (allMma(qkv)) {
                // RMSNorm in the products' prologue: only its scale per row is computed here
                device.launch("pw_rms_scale", rows, 1, ROW_BLOCK, 0, s.invRms, s.x, dim, cfg.rmsEps());
                gemm(PW_STORE, qkv, new CUdeviceptr[] {s.q, s.k, s.v}, s.x, s.invRms, w.rmsAtt(), rows);
            } else {
                device.launch("pw_rmsnorm", rows, 1, ROW_BLOCK, 0, s.xb, s.x, w.rmsAtt(), null, dim, cfg.rmsEps());
                if (!rows1(one, PW_STORE, qkv, new CUdeviceptr[] {s.q, s.k, s.v}, s.xb)) {
                    product(w.wq(), s.xb, s.q, rows);
                    product(w.wk(), s.xb, s.k, rows);
                    product(w.wv(), s.xb, s.v, rows);
                }
            }
            DeviceWeights.Extras extra = weights.extras.get(l);
            if (extra.bq() != null) {
                long n = (long) rows * (qDim + 2L * kvDim);
                device.launch("pw_qkv_bias", (int) ((n + 255) / 256), 1, 256, 0, s.q, s.k, s.v, extra.bq(), extra.bk(),
                        extra.bv(), rows, qDim, kvDim);
            }
            if (extra.qNorm() != null) {
                // in place, head by head, with the shared [headSize] weights (the CPU's loop over head slices)
                device.launch("pw_rmsnorm", rows * cfg.nHeads(), 1, HEAD_NORM_BLOCK, 0, s.q, s.q, extra.qNorm(), null,
                        hs, cfg.rmsEps());
                device.launch("pw_rmsnorm", rows * cfg.nKvHeads(), 1, HEAD_NORM_BLOCK, 0, s.k, s.k, extra.kNorm(), null,
                        hs, cfg.rmsEps());
            }
            CUdeviceptr cos = fusedRope ? weights.ropeCos : null;
            CUdeviceptr sin = fusedRope ? weights.ropeSin : null;
            if (!fusedRope) {
                long pairs = (long) rows * (qDim / 2);
                device.launch("pw_rope", (int) ((pairs + 255) / 256), 1, 256, 0, s.q, s.k, rowPos, weights.ropeCos,
                        weights.ropeSin, rows, qDim, kvDim, hs, neox);
            }
            device.launch("pw_kv_append", rows, 1, ROW_BLOCK, 0, kv.memory, kv.tags, kv.pages(), seqs, table, rowSeq,
                    rowPos, s.k, s.v, l, cfg.nLayers(), kvDim, pageTokens, checkFlag, s.flags, kv.writers, cos, sin, hs,
                    neox);
            int group = attentionGroup(plan, attShared);
            if (group > 1) {
                device.launch("pw_attention_rows", (rows + group - 1) / group, cfg.nHeads(), ATT_BLOCK,
                        (int) (group * attShared), s.att, s.q, kv.memory, kv.tags, kv.pages(), seqs, table, rowSeq, rowPos,
                        rows, group, (int) (attShared / Float.BYTES) - hs, l, cfg.nLayers(), qDim, kvDim, hs,
                        cfg.kvMul(), pageTokens, checkFlag, s.flags, cos, sin, neox);
            } else {
                device.launch("pw_attention", rows, cfg.nHeads(), ATT_BLOCK, (int) attShared, s.att, s.q, kv.memory,
                        kv.tags, kv.pages(), seqs, table, rowSeq, rowPos, l, cfg.nLayers(), qDim, kvDim, hs, cfg.kvMul(),
                        pageTokens, checkFlag, s.flags, cos, sin, neox);
            }
            residual(one, w.wo(), s.att, s.x, s.xo, rows);
            DeviceWeights.Matrix[] gateUp = {w.w1(), w.w3()};
            if (allMma(gateUp)) {
                device.launch("pw_rms_scale", rows, 1, ROW_BLOCK, 0, s.invRms, s.x, dim, cfg.rmsEps());
                gemm(PW_SWIGLU, gateUp, new CUdeviceptr[] {s.hb}, s.x, s.invRms, w.rmsFfn(), rows);
            } else {
                device.launch("pw_rmsnorm", rows, 1, ROW_BLOCK, 0, s.xb, s.x, w.rmsFfn(), null, dim, cfg.rmsEps());
                if (!rows1(one, PW_SWIGLU, gateUp, new CUdeviceptr[] {s.hb}, s.xb)) {
                    product(w.w1(), s.xb, s.hb, rows);
                    product(w.w3(), s.xb, s.hb2, rows);
                    long hidden = (long) rows * cfg.hiddenDim();
                    device.launch("pw_swiglu", (int) ((hidden + 255) / 256), 1, 256, 0, s.hb, s.hb2, hidden);
                }
            }
            residual(one, w.w2(), s.hb, s.x, s.xo, rows);
        }
        if (plan.outRows > 0) {
            device.launch("pw_rmsnorm", plan.outRows, 1, ROW_BLOCK, 0, s.logitsIn, s.x, weights.rmsFinal,
                    s.plan.withByteOffset(plan.logitRowsAt), dim, cfg.rmsEps());
            if (!rows1(plan.outRows == 1 && SINGLE_ROW_MATVEC, PW_STORE, new DeviceWeights.Matrix[] {weights.classifier},
                    new CUdeviceptr[] {s.logitsOut}, s.logitsIn)) {
                product(weights.classifier, s.logitsIn, s.logitsOut, plan.outRows);
            }
        }
    }

    /**
     * With graphs on: launches the step as the CUDA graph captured for its shape, capturing it at the
     * shape's second step; false (nothing launched) at a shape's first step, when graphs are off or
     * when the model's window does not fit the attention's shared memory. The plan and embedding rows
     * are already in the scratch buffers the graph reads, and the flags zeroed: the host work before a
     * launch (tag sync included) is the same as without graphs.
     */
    private boolean replayGraph(StepPlan plan, Scratch s, GpuKvStorage kv, int checkFlag) {
        // attention's shared memory for the model's whole window, so that it does not vary per step
        long attShared = (long) (cfg.seqLen() + cfg.headSize()) * Float.BYTES;
        if (!graphs || attShared > device.maxSharedBytes()) {
            return false;
        }
        GraphKey key = new GraphKey(plan.rows, plan.outRows, plan.sequences, kv, s, checkFlag, fusedRope);
        CUgraphExec exec = graphCache.get(key);
        if (exec == null && shapesSeen.get(key) == null) {
            // a shape's first step runs launch by launch: every kernel it uses is then loaded (the driver
            // loads modules' kernels lazily), and a shape seen once is not captured for nothing
            shapesSeen.put(key, Boolean.TRUE);
            return false;
        }
        if (exec == null) {
            exec = capture(() -> kernels(plan, s, kv, checkFlag, attShared));
            graphCache.put(key, exec);
            captures++;
        }
        JCudaDriver.cuGraphLaunch(exec, device.stream());
        return true;
    }

    /** What a captured step depends on beyond the device buffers' contents: its shape and the buffers themselves. */
    private record GraphKey(int rows, int outRows, int sequences, GpuKvStorage kv, Scratch scratch, int checkFlag,
                            boolean fusedRope) {
    }

    /** Captures the launches {@code enqueue} makes on the stream into an instantiated graph (none run now). */
    private CUgraphExec capture(Runnable enqueue) {
        CUgraph graph = new CUgraph();
        JCudaDriver.cuStreamBeginCapture(device.stream(), CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
        try {
            enqueue.run();
        } catch (RuntimeException | Error e) {
            try {
                JCudaDriver.cuStreamEndCapture(device.stream(), graph); // leaves the stream usable again
                JCudaDriver.cuGraphDestroy(graph);
            } catch (jcuda.CudaException invalidated) {
                e.addSuppressed(invalidated);
            }
            throw e;
        }
        JCudaDriver.cuStreamEndCapture(device.stream(), graph);
        try {
            CUgraphExec exec = new CUgraphExec();
            JCudaDriver.cuGraphInstantiate(exec, graph, 0);
            return exec;
        } finally {
            JCudaDriver.cuGraphDestroy(graph); // the instantiated graph keeps what it needs
        }
    }

    /** Blocks for one warp per output row. */
    private static int warpGrid(int outputRows) {
        return (outputRows + MATVEC_BLOCK / 32 - 1) / (MATVEC_BLOCK / 32);
    }

    /** out = m x (rows token rows): the tensor-core kernel for a packed matrix, else the matvec kernel. */
    private void product(DeviceWeights.Matrix m, CUdeviceptr x, CUdeviceptr out, int rows) {
        if (m.mma()) {
            gemm(PW_STORE, new DeviceWeights.Matrix[] {m}, new CUdeviceptr[] {out}, x, null, null, rows);
        } else {
            matvec(m, x, out, rows);
        }
    }

    /** x += m in: in the product's epilogue for a packed matrix, else the matvec (or batch-1) kernel then pw_add. */
    private void residual(boolean one, DeviceWeights.Matrix m, CUdeviceptr in, CUdeviceptr x, CUdeviceptr tmp, int rows) {
        if (m.mma()) {
            gemm(PW_ADD, new DeviceWeights.Matrix[] {m}, new CUdeviceptr[] {x}, in, null, null, rows);
        } else if (!rows1(one, PW_ADD, new DeviceWeights.Matrix[] {m}, new CUdeviceptr[] {x}, in)) {
            matvec(m, in, tmp, rows);
            add(x, tmp, (long) rows * cfg.dim());
        }
    }

    private static boolean allMma(DeviceWeights.Matrix[] ms) {
        return Arrays.stream(ms).allMatch(m -> m.mma() && m.type() == ms[0].type() && m.cols() == ms[0].cols());
    }

    /**
     * The tensor-core product ({@code pw_gemm_*}) of packed matrices, launch shape from {@link GemmPlan}
     * (the matrix shapes only; the token count sets grid.y): {@code PW_STORE} writes up to three stacked
     * matrices to their outputs, {@code PW_ADD} adds matrix 0 into {@code outs[0]}, {@code PW_SWIGLU}
     * writes silu(matrix 0) x matrix 1. With {@code invRms} and {@code g} the input is RMSNorm(x) by g,
     * applied as the activations are read.
     */
    private void gemm(int mode, DeviceWeights.Matrix[] ms, CUdeviceptr[] outs, CUdeviceptr x, CUdeviceptr invRms,
                      CUdeviceptr g, int tokens) {
        GemmLaunch l = gemmLaunch(mode, ms, outs, x, invRms, g, tokens);
        device.launch(l.kernel(), l.plan().gridX(), GemmPlan.gridY(tokens), l.plan().threads(), l.sharedBytes(), l.args());
    }

    /** A {@code pw_gemm_*} launch: its kernel, plan, shared memory and arguments in the kernel's order. */
    record GemmLaunch(String kernel, GemmPlan plan, int sharedBytes, Object[] args) {
    }

    static GemmLaunch gemmLaunch(int mode, DeviceWeights.Matrix[] ms, CUdeviceptr[] outs, CUdeviceptr x,
                                 CUdeviceptr invRms, CUdeviceptr g, int tokens) {
        int matrices = mode == PW_STORE ? ms.length : 1;
        int[] rows = new int[matrices];
        for (int j = 0; j < matrices; j++) {
            rows[j] = ms[j].rows();
        }
        GemmPlan p = GemmPlan.of(rows, ms[0].cols());
        List<Object> args = new ArrayList<>(16);
        for (int j = 0; j < 3; j++) {
            args.add(j < ms.length ? ms[j].data() : null);
        }
        for (int j = 0; j < 3; j++) {
            args.add(j < outs.length ? outs[j] : null);
        }
        for (int j = 0; j < 3; j++) {
            args.add(j < ms.length ? ms[j].rows() : 0);
        }
        args.add(x);
        args.add(invRms);
        args.add(g);
        args.add(tokens);
        args.add(ms[0].cols());
        args.add(p.slices());
        args.add(mode);
        // up to 8 tokens (decode): the variant with one n-tile of registers - same schedule, same sums
        String kernel = MmaPacking.kernel(ms[0].type()) + (tokens <= 8 ? "_n8" : "");
        return new GemmLaunch(kernel, p, p.sharedBytes(mode == PW_SWIGLU ? 2 : 1), args.toArray());
    }

    private void matvec(DeviceWeights.Matrix m, CUdeviceptr x, CUdeviceptr out, int rows) {
        if (m.mma()) {
            throw new IllegalStateException(m.type() + " matrix in the tensor-core layout given to the matvec kernel");
        }
        int grid = warpGrid(m.rows());
        String kernel = WeightPacking.matvecKernel(m.type());
        if (m.type() == DType.Q8_0) {
            device.launch(kernel, grid, 1, MATVEC_BLOCK, 0, m.data(), m.scales(), x, out, rows, m.rows(), m.cols());
        } else {
            device.launch(kernel, grid, 1, MATVEC_BLOCK, 0, m.data(), x, out, rows, m.rows(), m.cols());
        }
    }

    /** Epilogues of the batch-1 and tensor-core kernels ({@code PW_STORE} etc. in matvec.cu, {@code PW_GEMM_*} in gemm.cuh). */
    static final int PW_STORE = 0;
    static final int PW_ADD = 1;
    static final int PW_SWIGLU = 2;

    /**
     * One token row through {@code pw_rows1_*}, when {@code use} and the matrices share a weight type:
     * {@code PW_STORE} writes each matrix's rows to its output (up to three in one launch),
     * {@code PW_ADD} adds matrix 0's rows to {@code outs[0]}, {@code PW_SWIGLU} writes silu(matrix 0)
     * x matrix 1, row by row. Returns false (nothing launched) where the tiled kernels must run.
     */
    private boolean rows1(boolean use, int mode, DeviceWeights.Matrix[] ms, CUdeviceptr[] outs, CUdeviceptr x) {
        DType type = ms[0].type();
        if (!use || Arrays.stream(ms).anyMatch(m -> m.mma() || m.type() != type || m.cols() != ms[0].cols())) {
            return false;
        }
        int total = 0;
        for (DeviceWeights.Matrix m : mode == PW_STORE ? ms : new DeviceWeights.Matrix[] {ms[0]}) {
            total += m.rows();
        }
        List<Object> args = new ArrayList<>(15);
        for (int j = 0; j < 3; j++) {
            DeviceWeights.Matrix m = j < ms.length ? ms[j] : null;
            args.add(m == null ? null : m.data());
            if (type == DType.Q8_0) {
                args.add(m == null ? null : m.scales());
            }
        }
        for (int j = 0; j < 3; j++) {
            args.add(j < outs.length ? outs[j] : null);
        }
        for (int j = 0; j < 3; j++) {
            args.add(j < ms.length ? ms[j].rows() : 0);
        }
        args.add(x);
        args.add(ms[0].cols());
        args.add(mode);
        device.launch(WeightPacking.rows1Kernel(type), warpGrid(total), 1, MATVEC_BLOCK, 0, args.toArray());
        return true;
    }

    private void add(CUdeviceptr x, CUdeviceptr y, long n) {
        device.launch("pw_add", (int) ((n + 255) / 256), 1, 256, 0, x, y, n);
    }

    /** CUDA events around a step's kernels and host clocks around its enqueueing, summed per batch size. */
    private static final class StepTiming {
        private final CUevent start = new CUevent();
        private final CUevent stop = new CUevent();
        private final TreeMap<Integer, double[]> byRows = new TreeMap<>();
        private boolean created;

        void start(CudaDevice d) {
            if (!created) {
                JCudaDriver.cuEventCreate(start, 0);
                JCudaDriver.cuEventCreate(stop, 0);
                created = true;
            }
            JCudaDriver.cuEventRecord(start, d.stream());
        }

        void stop(CudaDevice d) {
            JCudaDriver.cuEventRecord(stop, d.stream());
        }

        void add(int rows, long enqueueNanos, long waitNanos) {
            float[] ms = new float[1];
            JCudaDriver.cuEventElapsedTime(ms, start, stop);
            double[] a = byRows.computeIfAbsent(rows, k -> new double[4]);
            a[0]++;
            a[1] += enqueueNanos / 1e6;
            a[2] += waitNanos / 1e6;
            a[3] += ms[0];
        }

        void print() {
            byRows.forEach((rows, a) -> System.err.printf(Locale.ROOT,
                    "gpu-timing rows=%d steps=%.0f enqueue_ms=%.3f wait_ms=%.3f gpu_ms=%.3f%n", rows, a[0], a[1] / a[0],
                    a[2] / a[0], a[3] / a[0]));
            if (created) {
                JCudaDriver.cuEventDestroy(start);
                JCudaDriver.cuEventDestroy(stop);
            }
        }
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        device.run(() -> {
            closed = true;
            if (timing != null) {
                timing.print();
            }
            if (kernelTiming != null) {
                kernelTiming.lines().forEach(System.err::println);
                kernelTiming.close();
            }
            device.sync();
            graphCache.clear();
            shapesSeen.clear();
            if (scratch != null) {
                scratch.free(device);
                scratch = null;
            }
        });
        onClose.run();
    }
}
