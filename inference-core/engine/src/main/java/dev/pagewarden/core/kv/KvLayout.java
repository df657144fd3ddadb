package dev.pagewarden.core.kv;

import dev.pagewarden.core.model.ModelConfig;

/**
 * Where a token's K and V vectors live inside a page. A page holds {@code pageTokens} positions of
 * every layer as one contiguous block (a transfer copies a page with a single copy, and a checksum
 * covers exactly one page): per layer a K block, then a V block, each {@code pageTokens * kvDim}
 * floats. Inside such a block the {@link Order} decides where the {@code headDim} floats of one KV
 * head of one slot are.
 *
 * <p>The order is the backend's choice (each lays out its own memory; pools that exchange pages
 * must agree, which the engine checks): the GPU kernels read slot-major rows, the CPU backend
 * reads head panels because its attention then walks memory in address order and scores a page's
 * slots without a lane reduction.
 */
public record KvLayout(int nLayers, int kvDim, int pageTokens, int headDim, Order order) {

    /** Arrangement of a (layer, K|V) block of a page. */
    public enum Order {
        /** {@code [slot][kvDim]}: the K (or V) row of a slot, all heads, is contiguous. */
        SLOT_MAJOR,
        /**
         * Per KV head, all of the page's slots together. V as {@code [kvHead][slot][headDim]}: one
         * head's vectors of the page are contiguous. K as {@code [kvHead][headDim][slot]}: a
         * panel in which one dimension of all the page's slots is contiguous (a vector's lanes), so
         * the scores of the page's slots are one fused multiply-add chain each over the
         * dimensions, like the rows of a {@code Matrix.Panels}. A K vector's elements lie
         * {@code pageTokens} floats apart ({@link #elementStride}).
         */
        HEAD_PANELS
    }

    /** Copies a run of floats: {@code floats} floats starting at float index {@code offset} of a page. */
    @FunctionalInterface
    public interface Run {
        void copy(long offset, long floats);
    }

    public KvLayout {
        if (nLayers < 1 || kvDim < 1 || pageTokens < 1 || headDim < 1 || kvDim % headDim != 0 || order == null) {
            throw new IllegalArgumentException("bad KV layout: layers " + nLayers + ", kvDim " + kvDim + ", pageTokens "
                    + pageTokens + ", headDim " + headDim + ", order " + order);
        }
    }

    /** The slot-major layout of a model's KV with {@code pageTokens} positions per page. */
    public static KvLayout of(ModelConfig cfg, int pageTokens) {
        return new KvLayout(cfg.nLayers(), cfg.kvDim(), pageTokens, cfg.headSize(), Order.SLOT_MAJOR);
    }

    /** Throws unless this layout holds {@code cfg}'s KV (layers, KV width, head size): what a backend checks before allocating. */
    public void requireFits(ModelConfig cfg) {
        if (nLayers != cfg.nLayers() || kvDim != cfg.kvDim() || headDim != cfg.headSize()) {
            throw new IllegalArgumentException("KV layout " + this + " does not match the model (" + cfg.nLayers()
                    + " layers, kvDim " + cfg.kvDim() + ", head size " + cfg.headSize() + ")");
        }
    }

    /** The same layout in another order. */
    public KvLayout in(Order o) {
        return new KvLayout(nLayers, kvDim, pageTokens, headDim, o);
    }

    /** KV heads per slot. */
    public int kvHeads() {
        return kvDim / headDim;
    }

    /** Floats in one page. */
    public long pageFloats() {
        return (long) nLayers * 2 * pageTokens * kvDim;
    }

    public long pageBytes() {
        return pageFloats() * Float.BYTES;
    }

    /**
     * Float index, within a page, of the first of the {@code headDim} floats of {@code head} at
     * {@code slot} (kv 0 = K, 1 = V); element {@code e} is {@code e * elementStride(kv)} floats on.
     */
    public long offset(int layer, int kv, int slot, int head) {
        long block = ((long) layer * 2 + kv) * pageTokens * kvDim;
        return switch (order) {
            case SLOT_MAJOR -> block + (long) slot * kvDim + (long) head * headDim;
            case HEAD_PANELS -> kv == 0
                    ? block + (long) head * pageTokens * headDim + slot
                    : block + ((long) head * pageTokens + slot) * headDim;
        };
    }

    /** Floats from one slot's vector of a head to the next slot's vector of the same head (kv 0 = K, 1 = V). */
    public int slotStride(int kv) {
        return switch (order) {
            case SLOT_MAJOR -> kvDim;
            case HEAD_PANELS -> kv == 0 ? 1 : headDim;
        };
    }

    /** Floats from one element of a K (kv=0) or V (kv=1) vector to the next: 1 but for K in {@link Order#HEAD_PANELS}. */
    public int elementStride(int kv) {
        return order == Order.HEAD_PANELS && kv == 0 ? pageTokens : 1;
    }

    /**
     * Float index, within a page, of the K (kv=0) or V (kv=1) row of {@code slot} in {@code layer}:
     * all {@code kvDim} floats of the slot, contiguous only in {@link Order#SLOT_MAJOR}.
     */
    public long rowOffset(int layer, int kv, int slot) {
        if (order != Order.SLOT_MAJOR) {
            throw new IllegalStateException("a " + order + " page has no contiguous K/V rows");
        }
        return offset(layer, kv, slot, 0);
    }

    /**
     * The contiguous runs of a page that hold slots {@code [0, slots)} of every layer's K and V, in
     * address order: what a transfer of the first {@code slots} positions of a page must copy, and
     * nothing beyond it.
     */
    public void slotRuns(int slots, Run run) {
        int n = Math.min(slots, pageTokens);
        if (n <= 0) {
            return;
        }
        for (int layer = 0; layer < nLayers; layer++) {
            for (int kv = 0; kv < 2; kv++) {
                if (n == pageTokens || order == Order.SLOT_MAJOR) { // the block's first n slots are one run
                    run.copy(offset(layer, kv, 0, 0), (long) n * kvDim);
                } else if (elementStride(kv) == 1) { // a run per head
                    for (int head = 0; head < kvHeads(); head++) {
                        run.copy(offset(layer, kv, 0, head), (long) n * headDim);
                    }
                } else { // a run per head and dimension of a panel
                    for (int head = 0; head < kvHeads(); head++) {
                        for (int e = 0; e < headDim; e++) {
                            run.copy(offset(layer, kv, 0, head) + (long) e * pageTokens, n);
                        }
                    }
                }
            }
        }
    }

    /** Pages needed for {@code tokens} positions. */
    public int pagesFor(long tokens) {
        return (int) ((tokens + pageTokens - 1) / pageTokens);
    }
}
