package dev.pagewarden.core.tensor;

import dev.pagewarden.core.model.DType;
import dev.pagewarden.core.model.Tensor;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;

/**
 * Benchmark, not a test: streams the weights of a 110M Llama (dim 768, hidden 2048, 12 layers,
 * vocabulary 32000: ~85 matmuls per token) through {@link MatMul} and compares the rate with
 * {@link Bandwidth#readGBs}.
 *
 * <pre>java --add-modules jdk.incubator.vector -cp inference-core/target/classes \
 *     dev.pagewarden.core.tensor.KernelBench [threads=2] [passes=15] [types=F32,F16,Q8_0] [offset=28]</pre>
 *
 * One pass = every matrix once = one decode step for the whole batch. The matrices start at byte
 * {@code offset} of their buffer (llama2.c files put fp32 data at offset 28). Reported: median and
 * best pass; GB/s counts weight bytes only.
 */
public final class KernelBench {
    private static final int DIM = 768;
    private static final int HIDDEN = 2048;
    private static final int LAYERS = 12;
    private static final int VOCAB = 32000;

    private KernelBench() {
    }

    public static void main(String[] args) {
        int threads = args.length > 0 ? Integer.parseInt(args[0]) : 2;
        int passes = args.length > 1 ? Integer.parseInt(args[1]) : 15;
        String[] types = args.length > 2 ? args[2].split(",") : new String[] {"F32", "F16", "Q8_0"};
        long offset = args.length > 3 ? Long.parseLong(args[3]) : 28;
        try (Parallel pool = new Parallel(threads)) {
            System.out.printf(Locale.ROOT, "kernels %s, %d threads, %d passes, offset %d%n",
                    MatMul.implementation(), threads, passes, offset);
            double bw = Bandwidth.readGBs(pool, 1L << 30, passes);
            System.out.printf(Locale.ROOT, "read bandwidth (best of %d): %.1f GB/s%n", passes, bw);
            for (String type : types) {
                run(pool, DType.valueOf(type), passes, offset, bw);
            }
        }
    }

    private static void run(Parallel pool, DType type, int passes, long offset, double bw) {
        List<int[]> shapes = new ArrayList<>();
        for (int l = 0; l < LAYERS; l++) {
            for (int i = 0; i < 4; i++) {
                shapes.add(new int[] {DIM, DIM});
            }
            shapes.add(new int[] {HIDDEN, DIM});
            shapes.add(new int[] {HIDDEN, DIM});
            shapes.add(new int[] {DIM, HIDDEN});
        }
        shapes.add(new int[] {VOCAB, DIM});
        long total = 0;
        for (int[] s : shapes) {
            total += type.bytesFor((long) s[0] * s[1]);
        }
        try (Arena arena = Arena.ofShared()) {
            MemorySegment all = arena.allocate(total + offset, 64);
            fillRandom(all, type, offset, total);
            List<Tensor> tensors = new ArrayList<>();
            long at = offset;
            for (int[] s : shapes) {
                long size = type.bytesFor((long) s[0] * s[1]);
                tensors.add(new Tensor("w" + tensors.size(), type, s[0], s[1], all.asSlice(at, size)));
                at += size;
            }
            for (int batch : new int[] {1, 8}) {
                float[] x = new float[batch * HIDDEN];
                float[] out = new float[batch * VOCAB];
                SplittableRandom rnd = new SplittableRandom(7);
                for (int i = 0; i < x.length; i++) {
                    x[i] = (float) rnd.nextDouble(-1, 1);
                }
                for (int p = 0; p < 3; p++) {
                    pass(pool, tensors, x, batch, out); // warm-up (JIT)
                }
                long[] nanos = new long[passes];
                for (int p = 0; p < passes; p++) {
                    long t0 = System.nanoTime();
                    pass(pool, tensors, x, batch, out);
                    nanos[p] = System.nanoTime() - t0;
                }
                Arrays.sort(nanos);
                long median = nanos[passes / 2];
                long best = nanos[0];
                System.out.printf(Locale.ROOT,
                        "%-4s batch %d: %.1f MB weights, median %.2f ms/pass = %.1f GB/s (%.0f%% of bw), %.1f tok/s;"
                                + " best %.2f ms = %.1f GB/s (%.0f%%), %.1f tok/s%n",
                        type, batch, total / 1e6, median / 1e6, (double) total / median, 100.0 * total / median / bw,
                        batch * 1e9 / median, best / 1e6, (double) total / best, 100.0 * total / best / bw,
                        batch * 1e9 / best);
            }
        }
    }

    private static void pass(Parallel pool, List<Tensor> tensors, float[] x, int batch, float[] out) {
        for (Tensor t : tensors) {
            MatMul.matmul(pool, t, x, batch, out);
        }
    }

    /** Random weights in [-1, 1) (F32, F16) or random bytes with sane fp16 scales (Q8_0). */
    private static void fillRandom(MemorySegment all, DType type, long offset, long total) {
        SplittableRandom rnd = new SplittableRandom(42);
        switch (type) {
            case F32 -> {
                for (long p = offset; p < offset + total; p += 4) {
                    all.set(Tensor.F32_LE, p, (float) rnd.nextDouble(-1, 1));
                }
            }
            case F16 -> {
                for (long p = offset; p < offset + total; p += 2) {
                    all.set(Tensor.I16_LE, p, Float.floatToFloat16((float) rnd.nextDouble(-1, 1)));
                }
            }
            case Q8_0 -> {
                for (long p = offset; p < offset + total; p += 34) {
                    all.set(Tensor.I16_LE, p, Float.floatToFloat16((float) rnd.nextDouble(0.001, 0.01)));
                    for (int j = 0; j < 32; j++) {
                        all.set(ValueLayout.JAVA_BYTE, p + 2 + j, (byte) rnd.nextInt(-127, 128));
                    }
                }
            }
        }
    }
}
