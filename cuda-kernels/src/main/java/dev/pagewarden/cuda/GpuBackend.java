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

    private final CudaDevice device;
    private final DeviceWeights weights;
    private final LlamaWeights hostWeights;
    private final ModelConfig cfg;
    private final Runnable onClose;
    private Scratch scratch;
    private boolean closed;
    /** With -Dpagewarden.gpu.timing=true: where step time goes (host enqueue vs waiting for the GPU), printed at close. */
    private final StepTiming timing = Boolean.getBoolean("pagewarden.gpu.timing") ? new StepTiming() : null;

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

    /** Device name, compute capability and which kernel image runs (for logs and the device check). */
    public String describe() {
        return device.name() + " (compute " + device.computeMajor() + "." + device.computeMinor() + ", driver CUDA "
                + CudaRequirements.versionText(device.driverVersion()) + ", " + (device.usesCubin() ? "sm_90 cubin" : "PTX")
                + ", launches " + device.launchPath() + (SINGLE_ROW_MATVEC ? ", batch-1 matvec kernels" : "")
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
        final CUdeviceptr x, xb, q, k, v, att, hb, hb2, xo, logitsIn, logitsOut, plan, flags;
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
            q = d.alloc(f * rows * c.dim());
            k = d.alloc(f * rows * c.kvDim());
            v = d.alloc(f * rows * c.kvDim());
            att = d.alloc(f * rows * c.dim());
            hb = d.alloc(f * rows * c.hiddenDim());
            hb2 = d.alloc(f * rows * c.hiddenDim());
            xo = d.alloc(f * rows * c.dim());
            logitsIn = d.alloc(f * outRows * c.dim());
            logitsOut = d.alloc(f * outRows * c.vocabSize());
            plan = d.alloc(planBytes);
            flags = d.alloc(8L * seqs);
            xUpAt = (planBytes + 255) / 256 * 256;
            up = d.pinned(xUpAt + f * rows * c.dim());
            down = d.pinned(f * outRows * c.vocabSize() + 8L * seqs);
        }

        boolean fits(int rows, int outRows, int seqs, long planBytes) {
            return this.rows >= rows && this.outRows >= outRows && this.seqs >= seqs && this.planBytes >= planBytes;
        }

        void free(CudaDevice d) {
            d.sync();
            for (CUdeviceptr p : new CUdeviceptr[] {x, xb, q, k, v, att, hb, hb2, xo, logitsIn, logitsOut, plan, flags}) {
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
        int kvDim = cfg.kvDim();
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
            long b = Math.max(plan.bytes, scratch == null ? 0 : scratch.planBytes);
            if (scratch != null) {
                scratch.free(device);
            }
            scratch = null;
            scratch = new Scratch(device, cfg, r, o, s, b);
        }
        Scratch s = scratch;
        boolean check = tags.checksOn();
        if (check) {
            kv.syncTags(tags, plan.pagesTouched());
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
        CUdeviceptr seqs = s.plan.withByteOffset(plan.seqsAt);
        CUdeviceptr table = s.plan.withByteOffset(plan.tableAt);
        CUdeviceptr rowSeq = s.plan.withByteOffset(plan.rowSeqAt);
        CUdeviceptr rowPos = s.plan.withByteOffset(plan.rowPosAt);
        int pageTokens = kv.layout().pageTokens();
        int checkFlag = check ? 1 : 0;
        // one token row (and the experiment on): Q, K, V in one launch, adds and SwiGLU in the epilogues
        boolean one = rows == 1 && SINGLE_ROW_MATVEC;
        for (int l = 0; l < cfg.nLayers(); l++) {
            DeviceWeights.Layer w = weights.layers.get(l);
            device.launch("pw_rmsnorm", rows, 1, ROW_BLOCK, 0, s.xb, s.x, w.rmsAtt(), null, dim, cfg.rmsEps());
            if (!rows1(one, PW_STORE, new DeviceWeights.Matrix[] {w.wq(), w.wk(), w.wv()}, new CUdeviceptr[] {s.q, s.k, s.v},
                    s.xb)) {
                matvec(w.wq(), s.xb, s.q, rows);
                matvec(w.wk(), s.xb, s.k, rows);
                matvec(w.wv(), s.xb, s.v, rows);
            }
            long pairs = (long) rows * (dim / 2);
            device.launch("pw_rope", (int) ((pairs + 255) / 256), 1, 256, 0, s.q, s.k, rowPos, weights.ropeCos,
                    weights.ropeSin, rows, dim, kvDim, cfg.headSize());
            device.launch("pw_kv_append", rows, 1, ROW_BLOCK, 0, kv.memory, kv.tags, kv.pages(), seqs, table, rowSeq,
                    rowPos, s.k, s.v, l, cfg.nLayers(), kvDim, pageTokens, checkFlag, s.flags, kv.writers);
            device.launch("pw_attention", rows, cfg.nHeads(), ATT_BLOCK, (int) attShared, s.att, s.q, kv.memory, kv.tags,
                    kv.pages(), seqs, table, rowSeq, rowPos, l, cfg.nLayers(), dim, kvDim, cfg.headSize(), cfg.kvMul(),
                    pageTokens, checkFlag, s.flags);
            if (!rows1(one, PW_ADD, new DeviceWeights.Matrix[] {w.wo()}, new CUdeviceptr[] {s.x}, s.att)) {
                matvec(w.wo(), s.att, s.xo, rows);
                add(s.x, s.xo, (long) rows * dim);
            }
            device.launch("pw_rmsnorm", rows, 1, ROW_BLOCK, 0, s.xb, s.x, w.rmsFfn(), null, dim, cfg.rmsEps());
            if (!rows1(one, PW_SWIGLU, new DeviceWeights.Matrix[] {w.w1(), w.w3()}, new CUdeviceptr[] {s.hb}, s.xb)) {
                matvec(w.w1(), s.xb, s.hb, rows);
                matvec(w.w3(), s.xb, s.hb2, rows);
                long hidden = (long) rows * cfg.hiddenDim();
                device.launch("pw_swiglu", (int) ((hidden + 255) / 256), 1, 256, 0, s.hb, s.hb2, hidden);
            }
            if (!rows1(one, PW_ADD, new DeviceWeights.Matrix[] {w.w2()}, new CUdeviceptr[] {s.x}, s.hb)) {
                matvec(w.w2(), s.hb, s.xo, rows);
                add(s.x, s.xo, (long) rows * dim);
            }
        }
        long logitBytes = 4L * plan.outRows * cfg.vocabSize();
        if (plan.outRows > 0) {
            device.launch("pw_rmsnorm", plan.outRows, 1, ROW_BLOCK, 0, s.logitsIn, s.x, weights.rmsFinal,
                    s.plan.withByteOffset(plan.logitRowsAt), dim, cfg.rmsEps());
            if (!rows1(plan.outRows == 1 && SINGLE_ROW_MATVEC, PW_STORE, new DeviceWeights.Matrix[] {weights.classifier},
                    new CUdeviceptr[] {s.logitsOut}, s.logitsIn)) {
                matvec(weights.classifier, s.logitsIn, s.logitsOut, plan.outRows);
            }
            device.copyToHost(s.down, 0, s.logitsOut, logitBytes);
        }
        device.copyToHost(s.down, logitBytes, s.flags, 8L * plan.sequences);
        if (timing != null) {
            timing.stop(device);
        }
        long t1 = System.nanoTime();
        device.sync();
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

    /** Blocks for one warp per output row. */
    private static int warpGrid(int outputRows) {
        return (outputRows + MATVEC_BLOCK / 32 - 1) / (MATVEC_BLOCK / 32);
    }

    private void matvec(DeviceWeights.Matrix m, CUdeviceptr x, CUdeviceptr out, int rows) {
        if (m.tiles()) {
            throw new IllegalStateException(m.type() + " matrices in the row-tile layout multiply only through the tensor-core"
                    + " GEMM with quant.cuh's decoders (pw_gemm_" + m.type().name().toLowerCase(java.util.Locale.ROOT)
                    + "), which this build does not launch");
        }
        int grid = warpGrid(m.rows());
        String kernel = WeightPacking.matvecKernel(m.type());
        if (m.type() == DType.Q8_0) {
            device.launch(kernel, grid, 1, MATVEC_BLOCK, 0, m.data(), m.scales(), x, out, rows, m.rows(), m.cols());
        } else {
            device.launch(kernel, grid, 1, MATVEC_BLOCK, 0, m.data(), x, out, rows, m.rows(), m.cols());
        }
    }

    /** Epilogues of the batch-1 kernel ({@code PW_STORE} etc. in matvec.cu). */
    private static final int PW_STORE = 0;
    private static final int PW_ADD = 1;
    private static final int PW_SWIGLU = 2;

    /**
     * One token row through {@code pw_rows1_*}, when {@code use} and the matrices share a weight type:
     * {@code PW_STORE} writes each matrix's rows to its output (up to three in one launch),
     * {@code PW_ADD} adds matrix 0's rows to {@code outs[0]}, {@code PW_SWIGLU} writes silu(matrix 0)
     * x matrix 1, row by row. Returns false (nothing launched) where the tiled kernels must run.
     */
    private boolean rows1(boolean use, int mode, DeviceWeights.Matrix[] ms, CUdeviceptr[] outs, CUdeviceptr x) {
        DType type = ms[0].type();
        if (!use || Arrays.stream(ms).anyMatch(m -> m.type() != type || m.cols() != ms[0].cols() || m.tiles())) {
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
            if (scratch != null) {
                scratch.free(device);
                scratch = null;
            }
        });
        onClose.run();
    }
}
