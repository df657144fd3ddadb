package dev.pagewarden.cuda;

import dev.pagewarden.core.kv.KvLayout;
import dev.pagewarden.core.model.ModelConfig;

import java.util.Locale;

/**
 * How many KV pages a pool gets from the GPU's free memory when the configuration gives it no size.
 * From the memory free after the weights are uploaded, held back: the activations of a step of
 * {@code stepRows} token rows for each of the engine's two backends (prefill and decode: their scratch
 * grows on the first steps, after the pools exist) and a safety margin of 4% of the device's memory,
 * at least 512 MiB (allocation granularity, the context's own growth, kernels' local memory). Of what
 * is left the pool takes {@code share}; each page also costs its owner tag and writer shadow in device
 * memory beside its K/V bytes.
 *
 * @param free      bytes free on the device when asked (cuMemGetInfo)
 * @param total     bytes of device memory
 * @param reserve   bytes held back for activations (two steps' scratch)
 * @param margin    the safety margin in bytes
 * @param pageCost  device bytes one page costs: K/V plus tag plus writer shadow
 * @param pages     pages the pool gets (0: the free memory does not cover the reserve)
 * @param kvBytes   their K/V bytes, the figure handed to the engine
 */
record KvSizing(long free, long total, long reserve, long margin, long pageCost, long pages, long kvBytes) {
    static final long MIN_MARGIN = 512L << 20;
    static final double MARGIN_FRACTION = 0.04;
    /** The engine's prefill and decode backends each hold a step's scratch. */
    static final int BACKENDS = 2;

    static KvSizing of(long free, long total, ModelConfig cfg, KvLayout layout, int stepRows, double share) {
        if (!(share > 0 && share <= 1)) {
            throw new IllegalArgumentException("memory share " + share + " is outside (0, 1]");
        }
        long reserve = BACKENDS * scratchBytes(cfg, layout, stepRows);
        long margin = Math.max(MIN_MARGIN, (long) (total * MARGIN_FRACTION));
        long pageCost = layout.pageBytes() + GpuKvStorage.TAG_BYTES + (long) layout.pageTokens() * Long.BYTES;
        long usable = Math.max(0, free - reserve - margin);
        long pages = (long) (usable * share) / pageCost;
        return new KvSizing(free, total, reserve, margin, pageCost, pages, pages * layout.pageBytes());
    }

    /**
     * Device bytes of one backend's step scratch for {@code rows} token rows (every row may want logits):
     * the activations GpuBackend allocates (x, xb, xo, logitsIn: dim; q, att: qDim; k, v: kvDim; hb, hb2:
     * hidden; logits: vocab) plus the step plan (a sequence descriptor, a full page table and the row
     * indices per row) and the flags.
     */
    static long scratchBytes(ModelConfig c, KvLayout layout, int rows) {
        long floatsPerRow = 4L * c.dim() + 2L * c.qDim() + 2L * c.kvDim() + 2L * c.hiddenDim() + c.vocabSize();
        long planPerRow = StepPlan.SEQ_BYTES + (long) StepPlan.ENTRY_BYTES * layout.pagesFor(c.seqLen()) + 3L * Integer.BYTES
                + 8;
        return rows * (floatsPerRow * Float.BYTES + planPerRow) + 4096;
    }

    String describe() {
        return String.format(Locale.ROOT, "%d MiB free of %d MiB, %d MiB held for two steps' activations, %d MiB margin: "
                        + "%d pages of %d bytes (K/V, tag, writer shadow)", free >> 20, total >> 20, reserve >> 20,
                margin >> 20, pages, pageCost);
    }
}
