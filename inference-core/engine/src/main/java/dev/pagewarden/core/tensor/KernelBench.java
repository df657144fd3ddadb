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
 *     dev.pagewarden.core.tensor.KernelBench [threads=2] [rounds=15] [types=F32,F16,Q8_0] [offset=28]</pre>
 *
 * One pass = every matrix once = one decode step for the whole batch. The matrices start at byte
 * {@code offset} of their buffer (llama2.c files put fp32 data at offset 28). The machine may be
 * shared, so each round times, back to back, one pass of {@link Bandwidth} over 1 GiB, one batch-1
 * pass and one batch-8 pass; reported are medians and bests over the rounds, and the ratios both
 * as the median of per-round ratios (same conditions) and as best over best. GB/s counts weight
 * bytes only. Each type runs twice: row-major as loaded, then repacked into {@link Matrix.Panels}
 * (what the CPU backend uses), each panel matrix in its own huge-page block.
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
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 15;
        String[] types = args.length > 2 ? args[2].split(",") : new String[] {"F32", "F16", "Q8_0"};
        long offset = args.length > 3 ? Long.parseLong(args[3]) : 28;
        try (Parallel pool = new Parallel(threads); Bandwidth.Probe probe = new Bandwidth.Probe(1L << 30, Kernels.ROWS)) {
            System.out.printf(Locale.ROOT, "kernels %s, %d threads, %d rounds, offset %d%n",
                    MatMul.implementation(), threads, rounds, offset);
            for (String type : types) {
                DType t = DType.valueOf(type);
                run(pool, probe, t, false, rounds, offset);
                if (t == DType.F32 || t == DType.F16 || t == DType.Q8_0) {
                    run(pool, probe, t, true, rounds, offset); // the layout the CPU backend loads weights in
                }
            }
        }
    }

    private static void run(Parallel pool, Bandwidth.Probe probe, DType type, boolean panels, int rounds, long offset) {
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
            MemorySegment all = HostMemory.allocate(arena, total + offset); // huge pages, as the engine's weights
            fillRandom(all, type, offset, total);
            List<Matrix> tensors = new ArrayList<>();
            long at = offset;
            for (int[] s : shapes) {
                long size = type.bytesFor((long) s[0] * s[1]);
                Tensor t = new Tensor("w" + tensors.size(), type, s[0], s[1], all.asSlice(at, size));
                tensors.add(panels && Matrix.Panels.packable(t)
                        ? Matrix.Panels.pack(t, MatMul.panelHeight(), HostMemory.allocate(arena,
                                Matrix.Panels.bytesFor(type, s[0], s[1], MatMul.panelHeight())))
                        : Matrix.rowMajor(t));
                at += size;
            }
            float[] x = new float[8 * HIDDEN];
            SplittableRandom rnd = new SplittableRandom(7);
            for (int i = 0; i < x.length; i++) {
                x[i] = (float) rnd.nextDouble(-1, 1);
            }
            float[] out = new float[8 * VOCAB];
            for (int p = 0; p < 3; p++) { // warm-up (JIT)
                pass(pool, tensors, x, 1, out);
                pass(pool, tensors, x, 8, out);
            }
            double[] bw = new double[rounds];
            double[] gbs1 = new double[rounds];
            double[] tok8 = new double[rounds];
            double[] fraction = new double[rounds];
            double[] speedup = new double[rounds];
            for (int round = 0; round < rounds; round++) {
                bw[round] = probe.pass(pool);
                long t1 = pass(pool, tensors, x, 1, out);
                long t8 = pass(pool, tensors, x, 8, out);
                gbs1[round] = (double) total / t1;
                tok8[round] = 8e9 / t8;
                fraction[round] = gbs1[round] / bw[round];
                speedup[round] = tok8[round] / (1e9 / t1);
            }
            System.out.printf(Locale.ROOT, "%-4s %s, %.1f MB of weights, %d rounds: median / best%n", type,
                    panels ? "panels" : "rows", total / 1e6, rounds);
            System.out.printf(Locale.ROOT, "  read bandwidth   %6.1f / %6.1f GB/s%n", median(bw), best(bw));
            System.out.printf(Locale.ROOT, "  batch 1          %6.1f / %6.1f GB/s of weights = %6.1f / %6.1f tok/s%n",
                    median(gbs1), best(gbs1), median(gbs1) * 1e9 / total, best(gbs1) * 1e9 / total);
            System.out.printf(Locale.ROOT, "  batch 8          %6.1f / %6.1f tok/s%n", median(tok8), best(tok8));
            System.out.printf(Locale.ROOT, "  batch 1 / bandwidth: median of per-round ratios %.0f%%, best / best %.0f%%%n",
                    100 * median(fraction), 100 * best(gbs1) / best(bw));
            System.out.printf(Locale.ROOT, "  batch 8 / batch 1 tok/s: median of per-round ratios %.2fx, best / best %.2fx%n",
                    median(speedup), best(tok8) / (best(gbs1) * 1e9 / total));
        }
    }

    private static double median(double[] v) {
        double[] s = v.clone();
        Arrays.sort(s);
        return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
    }

    private static double best(double[] v) {
        return Arrays.stream(v).max().orElse(Double.NaN);
    }

    /** One decode step's matmuls; nanoseconds. */
    private static long pass(Parallel pool, List<Matrix> tensors, float[] x, int batch, float[] out) {
        long t0 = System.nanoTime();
        for (Matrix t : tensors) {
            MatMul.matmul(pool, t, x, batch, out);
        }
        return System.nanoTime() - t0;
    }

    /** Random weights in [-1, 1) (F32, F16, BF16) or random bytes with sane fp16 scales (the block types). */
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
            default -> {
                for (long p = offset; p < offset + total; p++) {
                    all.set(ValueLayout.JAVA_BYTE, p, (byte) rnd.nextInt(256));
                }
                long bb = type.blockBytes();
                long scale = switch (type) {
                    case Q6_K -> 208;
                    case BF16 -> -1;
                    default -> 0; // Q4_0's d, the K-quants' d
                };
                for (long p = offset; scale >= 0 && p < offset + total; p += bb) {
                    all.set(Tensor.I16_LE, p + scale, Float.floatToFloat16((float) rnd.nextDouble(0.0005, 0.002)));
                    if (type == DType.Q4_K || type == DType.Q5_K) {
                        all.set(Tensor.I16_LE, p + 2, Float.floatToFloat16((float) rnd.nextDouble(0.0005, 0.002)));
                    }
                }
            }
        }
    }
}
