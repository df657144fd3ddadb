package dev.pagewarden.cuda;

import dev.pagewarden.core.model.DType;
import dev.pagewarden.core.model.LlamaWeights;
import dev.pagewarden.core.model.ModelConfig;
import dev.pagewarden.core.model.RopeTables;
import dev.pagewarden.core.model.Tensor;
import jcuda.driver.CUdeviceptr;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * A model's weights in device memory, uploaded once (through a pinned staging buffer) and shared by
 * every GPU backend of that model. The token embedding stays on the host: a step looks up only its
 * own tokens' rows, exactly as the CPU backend does, and uploads them with the step. With
 * {@code -Dpagewarden.gpu.gemm=true} F16 and BF16 matrices go up in the tensor-core fragment order
 * ({@link MmaPacking}), packed chunk by chunk into the staging buffer straight from the (mapped) model.
 */
final class DeviceWeights {
    /**
     * {@code mma}: {@code data} is in the tensor-core kernels' layout - {@link MmaPacking}'s fragment order
     * (F16, BF16) or {@link QuantPacking}'s row tiles (quantized types) - and multiplies only through them.
     */
    record Matrix(DType type, int rows, int cols, CUdeviceptr data, CUdeviceptr scales, boolean mma) {
    }

    record Layer(CUdeviceptr rmsAtt, Matrix wq, Matrix wk, Matrix wv, Matrix wo, CUdeviceptr rmsFfn,
                 Matrix w1, Matrix w2, Matrix w3) {
    }

    /** A layer's vectors beyond the plain Llama block, null where the architecture has none: Q/K/V biases (qwen2), per-head Q/K norm weights (qwen3). */
    record Extras(CUdeviceptr bq, CUdeviceptr bk, CUdeviceptr bv, CUdeviceptr qNorm, CUdeviceptr kNorm) {
    }

    private static final long STAGING = 64L << 20;

    final List<Layer> layers;
    final List<Extras> extras;
    final CUdeviceptr rmsFinal;
    final Matrix classifier;
    final CUdeviceptr ropeCos;
    final CUdeviceptr ropeSin;
    final long bytes;
    private final List<CUdeviceptr> allocations;

    private DeviceWeights(List<Layer> layers, List<Extras> extras, CUdeviceptr rmsFinal, Matrix classifier, CUdeviceptr ropeCos,
                          CUdeviceptr ropeSin, long bytes, List<CUdeviceptr> allocations) {
        this.layers = layers;
        this.extras = extras;
        this.rmsFinal = rmsFinal;
        this.classifier = classifier;
        this.ropeCos = ropeCos;
        this.ropeSin = ropeSin;
        this.bytes = bytes;
        this.allocations = allocations;
    }

    /**
     * Uploads on the device thread; on failure frees what it had allocated. With the GEMM on
     * ({@link GpuBackend#GEMM}) F16/BF16 matrices go in {@link MmaPacking}'s
     * fragment order and quantized ones in {@link QuantPacking}'s row tiles.
     */
    static DeviceWeights upload(CudaDevice d, LlamaWeights w) {
        return d.call(() -> new Uploader(d, GpuBackend.GEMM).upload(w));
    }

    void free(CudaDevice d) {
        d.run(() -> {
            d.sync();
            allocations.forEach(d::free);
            allocations.clear();
        });
    }

    /** The RoPE tables the device rotates by: the CPU backend's own ({@link RopeTables}), scaling included. */
    static float[][] ropeTables(ModelConfig cfg) {
        RopeTables t = RopeTables.of(cfg);
        return new float[][] {t.cos(), t.sin()};
    }

    private static final class Uploader {
        private final CudaDevice d;
        private final boolean gemm;
        private final List<CUdeviceptr> allocations = new ArrayList<>();
        private final Map<Tensor, Matrix> matrices = new IdentityHashMap<>();
        private CudaDevice.Pinned staging;
        private long bytes;

        Uploader(CudaDevice d, boolean gemm) {
            this.d = d;
            this.gemm = gemm;
        }

        DeviceWeights upload(LlamaWeights w) {
            try {
                staging = d.pinned(STAGING);
                List<Layer> layers = new ArrayList<>();
                for (LlamaWeights.Layer l : w.layers()) {
                    layers.add(new Layer(vector(l.rmsAtt()), matrix(l.wq()), matrix(l.wk()), matrix(l.wv()), matrix(l.wo()),
                            vector(l.rmsFfn()), matrix(l.w1()), matrix(l.w2()), matrix(l.w3())));
                }
                List<Extras> extras = new ArrayList<>();
                for (LlamaWeights.Layer l : w.layers()) {
                    extras.add(new Extras(optional(l.bq()), optional(l.bk()), optional(l.bv()), optional(l.qNorm()),
                            optional(l.kNorm())));
                }
                CUdeviceptr rmsFinal = vector(w.rmsFinal());
                Matrix classifier = matrix(w.classifier());
                float[][] rope = ropeTables(w.config());
                CUdeviceptr cos = floats(rope[0]);
                CUdeviceptr sin = floats(rope[1]);
                d.sync();
                return new DeviceWeights(List.copyOf(layers), List.copyOf(extras), rmsFinal, classifier, cos, sin, bytes, allocations);
            } catch (RuntimeException | Error e) {
                d.sync();
                allocations.forEach(d::free);
                throw e;
            } finally {
                d.sync();
                d.free(staging);
            }
        }

        private Matrix matrix(Tensor t) {
            Matrix m = matrices.get(t);
            if (m != null) {
                return m; // a tied classifier shares the upload
            }
            if (gemm && QuantPacking.TYPES.contains(t.type())) {
                m = new Matrix(t.type(), t.rows(), t.cols(), quantTiles(t), null, true);
            } else if (t.type() == DType.Q8_0) {
                try (Arena arena = Arena.ofConfined()) {
                    WeightPacking.Q8Split split = WeightPacking.splitQ8(t, arena);
                    m = new Matrix(t.type(), t.rows(), t.cols(), segment(split.quants()), segment(split.scales()), false);
                }
            } else if (gemm && MmaPacking.packs(t.type())) {
                m = new Matrix(t.type(), t.rows(), t.cols(), packed(t), null, true);
            } else {
                m = new Matrix(t.type(), t.rows(), t.cols(), segment(t.data()), null, false);
            }
            matrices.put(t, m);
            return m;
        }

        /** A matrix in fragment order: packed into the staging buffer a chunk of tiles at a time, then copied. */
        private CUdeviceptr packed(Tensor t) {
            long n = MmaPacking.packedBytes(t.rows(), t.cols());
            return staged(n / MmaPacking.TILE_BYTES, MmaPacking.TILE_BYTES,
                    (from, to) -> MmaPacking.pack(t, from, (int) (to - from), staging.segment()));
        }

        private CUdeviceptr vector(Tensor t) {
            return floats(WeightPacking.row(t));
        }

        private CUdeviceptr optional(Tensor t) {
            return t == null ? null : vector(t);
        }

        private CUdeviceptr floats(float[] v) {
            return segment(MemorySegment.ofArray(v));
        }

        /**
         * A quantized matrix in the row-tile layout: packed from the mapped tensor straight into the
         * staging buffer, as many row tiles at a time as it holds, each chunk then copied up.
         */
        private CUdeviceptr quantTiles(Tensor t) {
            QuantPacking.Layout l = QuantPacking.layout(t.type(), t.rows(), t.cols());
            if (l.stride() > STAGING) {
                throw new IllegalArgumentException("tensor " + t.name() + ": a row tile of " + l.stride()
                        + " bytes exceeds the staging buffer");
            }
            return staged(l.rowTiles(), l.stride(), (from, to) -> QuantPacking.pack(t, (int) from, (int) to, staging.segment()));
        }

        /** Copies host bytes (mapped file, heap or native) to a new device allocation, chunk by chunk. */
        private CUdeviceptr segment(MemorySegment src) {
            return staged(src.byteSize(), 1, (from, to) -> MemorySegment.copy(src, ValueLayout.JAVA_BYTE, from,
                    staging.segment(), ValueLayout.JAVA_BYTE, 0, to - from));
        }

        /** Writes units [from, to) of an upload into the staging buffer, from its offset 0. */
        private interface Fill {
            void into(long from, long to);
        }

        /**
         * A new device allocation of {@code units} x {@code unitBytes}, filled through the pinned staging
         * buffer as many whole units at a time as it holds, each chunk then copied up.
         */
        private CUdeviceptr staged(long units, long unitBytes, Fill fill) {
            long n = units * unitBytes;
            CUdeviceptr dst = d.alloc(n);
            allocations.add(dst);
            bytes += n;
            long per = STAGING / unitBytes;
            for (long from = 0; from < units; from += per) {
                long to = Math.min(units, from + per);
                d.sync(); // the previous chunk has left the staging buffer
                fill.into(from, to);
                d.copyToDevice(dst.withByteOffset(from * unitBytes), staging, 0, (to - from) * unitBytes);
            }
            return dst;
        }
    }
}
