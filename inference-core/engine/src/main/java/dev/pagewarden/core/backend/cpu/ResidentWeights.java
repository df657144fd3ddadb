package dev.pagewarden.core.backend.cpu;

import dev.pagewarden.core.model.LlamaWeights;
import dev.pagewarden.core.model.ModelConfig;
import dev.pagewarden.core.model.Tensor;
import dev.pagewarden.core.tensor.HostMemory;
import dev.pagewarden.core.tensor.MatMul;
import dev.pagewarden.core.tensor.Matrix;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * The CPU backend's own copy of a model's weights, as a GPU backend uploads them to the device:
 * every tensor 64-byte aligned inside one huge-page-backed block, in the layout its kernels read.
 * Weight matrices are repacked into {@link Matrix.Panels} (each panel one sequential stream, read
 * once for a whole decode batch) unless they hold non-finite F16 values or Q8_0 scales or the native
 * kernels compute their type ({@link MatMul#servesNatively}); those, the
 * embedding table (looked up by row) and the norm weights stay row-major. The loader's file mapping
 * stays untouched (and can be evicted); tensors shared in the model stay shared, except that a tied
 * classifier gets a panel copy beside the row-major embedding table.
 */
record ResidentWeights(ModelConfig config, Tensor tokenEmbedding, List<Layer> layers, Tensor rmsFinal,
                       Matrix classifier) {

    /** {@code bq}/{@code bk}/{@code bv} (Qwen 2 biases) and {@code qNorm}/{@code kNorm} (Qwen 3) are null when absent. */
    record Layer(Tensor rmsAtt, Matrix wq, Matrix wk, Matrix wv, Matrix wo, Tensor rmsFfn, Matrix w1, Matrix w2,
                 Matrix w3, float[] bq, float[] bk, float[] bv, Tensor qNorm, Tensor kNorm) {
    }

    ResidentWeights {
        layers = List.copyOf(layers);
    }

    static ResidentWeights upload(LlamaWeights w, Arena arena) {
        Copier copier = new Copier(MatMul.panelHeight());
        copy(w, copier); // a dry run that only adds up the size of the one block
        copier.allocate(arena);
        return copy(w, copier);
    }

    private static ResidentWeights copy(LlamaWeights w, Copier c) {
        List<Layer> layers = new ArrayList<>();
        for (LlamaWeights.Layer l : w.layers()) {
            layers.add(new Layer(c.row(l.rmsAtt()), c.matrix(l.wq()), c.matrix(l.wk()), c.matrix(l.wv()),
                    c.matrix(l.wo()), c.row(l.rmsFfn()), c.matrix(l.w1()), c.matrix(l.w2()), c.matrix(l.w3()),
                    floats(l.bq()), floats(l.bk()), floats(l.bv()),
                    l.qNorm() == null ? null : c.row(l.qNorm()), l.kNorm() == null ? null : c.row(l.kNorm())));
        }
        return new ResidentWeights(w.config(), c.row(w.tokenEmbedding()), layers, c.row(w.rmsFinal()),
                c.matrix(w.classifier()));
    }

    /** A bias vector as floats (small: added per token), or null. */
    private static float[] floats(Tensor t) {
        if (t == null) {
            return null;
        }
        float[] out = new float[t.cols()];
        for (int i = 0; i < out.length; i++) {
            out[i] = t.get(0, i);
        }
        return out;
    }

    /**
     * Copies each distinct tensor once. Before {@link #allocate} it only counts bytes (and hands back
     * the loader's tensors, which the sizing pass discards); afterwards it copies into the block.
     */
    private static final class Copier {
        private final int height;
        private final Map<Tensor, Tensor> rows = new IdentityHashMap<>();
        private final Map<Tensor, Matrix> matrices = new IdentityHashMap<>();
        /** Kept across both passes: deciding means scanning an F16 tensor for non-finite values. */
        private final Map<Tensor, Boolean> packable = new IdentityHashMap<>();
        private MemorySegment block;
        private long at;

        Copier(int height) {
            this.height = height;
        }

        void allocate(Arena arena) {
            block = HostMemory.allocate(arena, Math.max(at, 64));
            at = 0;
            rows.clear();
            matrices.clear();
        }

        Tensor row(Tensor t) {
            Tensor copy = rows.get(t);
            if (copy == null) {
                MemorySegment dst = take(t.data().byteSize());
                if (dst != null) {
                    dst.copyFrom(t.data());
                    copy = new Tensor(t.name(), t.type(), t.rows(), t.cols(), dst);
                } else {
                    copy = t;
                }
                rows.put(t, copy);
            }
            return copy;
        }

        Matrix matrix(Tensor t) {
            Matrix m = matrices.get(t);
            if (m == null) {
                // types the native kernels compute stay row-major: they read the blocks where they lie
                if (!MatMul.servesNatively(t.type()) && packable.computeIfAbsent(t, Matrix.Panels::packable)) {
                    MemorySegment dst = take(Matrix.Panels.bytesFor(t.type(), t.rows(), t.cols(), height));
                    m = dst != null ? Matrix.Panels.pack(t, height, dst) : Matrix.rowMajor(t);
                } else {
                    m = Matrix.rowMajor(row(t));
                }
                matrices.put(t, m);
            }
            return m;
        }

        /** The next 64-byte-aligned slice of the block, or null while sizing. */
        private MemorySegment take(long bytes) {
            MemorySegment slice = block == null ? null : block.asSlice(at, bytes);
            at += (bytes + 63) & ~63L;
            return slice;
        }
    }
}
