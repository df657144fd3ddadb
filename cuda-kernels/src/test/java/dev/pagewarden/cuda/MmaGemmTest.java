package dev.pagewarden.cuda;

import dev.pagewarden.core.model.DType;
import dev.pagewarden.core.model.Tensor;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The tensor-core product without a GPU: the packing against the PTX fragment table, and the kernel's
 * schedule ({@link MmaEmulator}) against a float64 reference and for batch invariance; the launch plan's
 * rule and limits.
 */
class MmaGemmTest {

    static Tensor random16(Random rnd, DType type, int rows, int cols, float scale) {
        MemorySegment data = MemorySegment.ofArray(new byte[2 * rows * cols]);
        for (long i = 0; i < (long) rows * cols; i++) {
            float v = (rnd.nextFloat() * 2 - 1) * scale;
            short bits = type == DType.BF16 ? (short) (Float.floatToRawIntBits(MmaEmulator.roundBf16(v)) >>> 16)
                    : Float.floatToFloat16(v);
            data.set(Tensor.I16_LE, 2 * i, bits);
        }
        return new Tensor("w", type, rows, cols, data);
    }

    static float[][] randomX(Random rnd, int tokens, int dim) {
        float[][] x = new float[tokens][dim];
        for (float[] row : x) {
            for (int i = 0; i < dim; i++) {
                row[i] = (float) rnd.nextGaussian();
            }
        }
        return x;
    }

    static float weight(Tensor t, int r, int c) {
        short bits = t.data().get(Tensor.I16_LE, 2L * ((long) r * t.cols() + c));
        return t.type() == DType.BF16 ? Float.intBitsToFloat((bits & 0xffff) << 16) : Float.float16ToFloat(bits);
    }

    @Test
    void eachLanesFragmentHoldsTheValuesThePtxTableNames() {
        Random rnd = new Random(3);
        for (DType type : List.of(DType.F16, DType.BF16)) {
            Tensor t = random16(rnd, type, 37, 50, 1f); // neither a multiple of 16: zero padding
            int rowTiles = 3;
            int kTiles = 4;
            assertThat(MmaPacking.packedBytes(37, 50)).isEqualTo(rowTiles * kTiles * 512L);
            MemorySegment all = MemorySegment.ofArray(new byte[rowTiles * kTiles * 512]);
            MmaPacking.pack(t, 0, rowTiles * kTiles, all);
            for (int rt = 0; rt < rowTiles; rt++) {
                for (int kt = 0; kt < kTiles; kt++) {
                    for (int lane = 0; lane < 32; lane++) {
                        int g = lane / 4;
                        int q = lane % 4;
                        for (int reg = 0; reg < 4; reg++) {
                            for (int half = 0; half < 2; half++) {
                                // PTX ISA, mma.m16n8k16 A fragment: a0,a1 (row g, cols 2q,2q+1), a2,a3 (row g+8),
                                // a4,a5 (row g, cols 2q+8,2q+9), a6,a7 (row g+8, cols 2q+8,2q+9)
                                int row = rt * 16 + g + (reg == 1 || reg == 3 ? 8 : 0);
                                int col = kt * 16 + 2 * q + half + (reg >= 2 ? 8 : 0);
                                long at = (rt * kTiles + kt) * 512L + lane * 16L + reg * 4L + half * 2L;
                                short want = row < 37 && col < 50 ? t.data().get(Tensor.I16_LE, 2L * (row * 50 + col)) : 0;
                                assertThat(all.get(Tensor.I16_LE, at)).as("%s tile (%d,%d) lane %d reg %d half %d", type, rt,
                                        kt, lane, reg, half).isEqualTo(want);
                            }
                        }
                    }
                }
            }
            // chunk by chunk (an upload's staging buffer) gives the same bytes
            for (int first = 0; first < rowTiles * kTiles; first += 5) {
                int count = Math.min(5, rowTiles * kTiles - first);
                MemorySegment chunk = MemorySegment.ofArray(new byte[5 * 512]);
                MmaPacking.pack(t, first, count, chunk);
                assertThat(chunk.asSlice(0, count * 512L).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE))
                        .isEqualTo(all.asSlice(first * 512L, count * 512L).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE));
            }
        }
        Tensor f32 = new Tensor("f", DType.F32, 1, 4, MemorySegment.ofArray(new byte[16]));
        assertThatThrownBy(() -> MmaPacking.pack(f32, 0, 1, MemorySegment.ofArray(new byte[512])))
                .hasMessageContaining("F32").hasMessageContaining("F16 or BF16");
        Tensor t = random16(rnd, DType.F16, 16, 16, 1f);
        assertThatThrownBy(() -> MmaPacking.pack(t, 0, 2, MemorySegment.ofArray(new byte[1024])))
                .hasMessageContaining("which has 1");
        assertThatThrownBy(() -> MmaPacking.pack(t, 0, 1, MemorySegment.ofArray(new byte[100])))
                .hasMessageContaining("need 512 bytes");
        assertThat(MmaPacking.kernel(DType.BF16)).isEqualTo("pw_gemm_bf16");
    }

    /** out[t][o] in float64 from the weights and the B operand's rounded activations. */
    static double[][] reference(Tensor w, float[][] x, float[] inv, float[] g) {
        boolean bf16 = w.type() == DType.BF16;
        double[][] out = new double[x.length][w.rows()];
        for (int t = 0; t < x.length; t++) {
            for (int o = 0; o < w.rows(); o++) {
                double s = 0;
                for (int k = 0; k < w.cols(); k++) {
                    s += (double) weight(w, o, k) * MmaEmulator.bValue(x, inv, g, t, k, w.cols(), bf16);
                }
                out[t][o] = s;
            }
        }
        return out;
    }

    /** sum_k |W[o][k] * b[t][k]|: the scale of the float rounding errors of output (t, o). */
    static double absSum(Tensor w, float[][] x, float[] inv, float[] g, int t, int o) {
        double s = 0;
        for (int k = 0; k < w.cols(); k++) {
            s += Math.abs((double) weight(w, o, k) * MmaEmulator.bValue(x, inv, g, t, k, w.cols(), w.type() == DType.BF16));
        }
        return s;
    }

    /**
     * Tolerance of the model: each of the kTiles/S mma steps of a slice and each of the S - 1 adds of the
     * combine rounds a partial sum no larger than sum|W*b| to float, half an ulp (2^-24 relative) each.
     */
    static double bound(GemmPlan plan, double absSum) {
        return (plan.kTiles() + plan.slices() + 1) * Math.scalb(1.0, -24) * absSum;
    }

    @Test
    void storeAddAndSwigluMatchTheFloat64ReferenceWithinTheRoundingBound() {
        Random rnd = new Random(5);
        for (DType type : List.of(DType.F16, DType.BF16)) {
            for (int[] shape : new int[][] {{40, 72}, {16, 16}, {33, 300}, {24, 1000}}) {
                int dim = shape[1];
                float[][] x = randomX(rnd, 70, dim); // two token blocks
                float[] inv = new float[x.length];
                for (int t = 0; t < x.length; t++) {
                    inv[t] = 0.5f + rnd.nextFloat();
                }
                float[] g = randomX(rnd, 1, dim)[0];
                // STORE of three stacked matrices with the prologue
                Tensor[] qkv = {random16(rnd, type, shape[0], dim, 0.1f), random16(rnd, type, 17, dim, 0.1f),
                        random16(rnd, type, 8, dim, 0.1f)};
                GemmPlan plan = GemmPlan.of(new int[] {shape[0], 17, 8}, dim);
                float[][][] outs = new float[3][][];
                for (int m = 0; m < 3; m++) {
                    outs[m] = new float[x.length][qkv[m].rows()];
                }
                MmaEmulator.run(plan, packAll(qkv), outs, MmaEmulator.STORE, x, inv, g);
                for (int m = 0; m < 3; m++) {
                    double[][] ref = reference(qkv[m], x, inv, g);
                    for (int t = 0; t < x.length; t++) {
                        for (int o = 0; o < qkv[m].rows(); o++) {
                            assertThat((double) outs[m][t][o]).as("%s %s m%d (%d,%d)", type, Arrays.toString(shape), m, t, o)
                                    .isCloseTo(ref[t][o], org.assertj.core.data.Offset.offset(
                                            bound(plan, absSum(qkv[m], x, inv, g, t, o)) + 1e-30));
                        }
                    }
                }
                // ADD into a residual, no prologue
                Tensor wo = random16(rnd, type, shape[0], dim, 0.1f);
                GemmPlan p1 = GemmPlan.of(shape[0], dim);
                float[][] resid = randomX(rnd, x.length, shape[0]);
                float[][] before = Arrays.stream(resid).map(float[]::clone).toArray(float[][]::new);
                MmaEmulator.run(p1, packAll(wo), new float[][][] {resid}, MmaEmulator.ADD, x, null, null);
                double[][] ref = reference(wo, x, null, null);
                for (int t = 0; t < x.length; t++) {
                    for (int o = 0; o < shape[0]; o++) {
                        double tol = bound(p1, absSum(wo, x, null, null, t, o)) + Math.ulp(resid[t][o]);
                        assertThat((double) resid[t][o]).isCloseTo(before[t][o] + ref[t][o], org.assertj.core.data.Offset.offset(tol));
                    }
                }
                // SWIGLU of gate and up with the prologue
                Tensor gate = random16(rnd, type, shape[0], dim, 0.1f);
                Tensor up = random16(rnd, type, shape[0], dim, 0.1f);
                float[][] h = new float[x.length][shape[0]];
                MmaEmulator.run(p1, packAll(gate, up), new float[][][] {h}, MmaEmulator.SWIGLU, x, inv, g);
                double[][] rg = reference(gate, x, inv, g);
                double[][] ru = reference(up, x, inv, g);
                for (int t = 0; t < x.length; t++) {
                    for (int o = 0; o < shape[0]; o++) {
                        double want = rg[t][o] / (1 + Math.exp(-rg[t][o])) * ru[t][o];
                        double tol = 2 * (bound(p1, absSum(gate, x, inv, g, t, o)) * Math.abs(ru[t][o])
                                + bound(p1, absSum(up, x, inv, g, t, o)) * Math.abs(rg[t][o])) + 1e-6 * Math.abs(want) + 1e-30;
                        assertThat((double) h[t][o]).isCloseTo(want, org.assertj.core.data.Offset.offset(tol));
                    }
                }
            }
        }
    }

    static MmaEmulator.Packed[] packAll(Tensor... ts) {
        return Arrays.stream(ts).map(MmaEmulator.Packed::of).toArray(MmaEmulator.Packed[]::new);
    }

    @Test
    void aTokensOutputsAreBitIdenticalInEveryBatchSizeAndPosition() {
        Random rnd = new Random(7);
        int dim = 264; // 17 k-tiles (the last one padded): 4 slices
        Tensor gate = random16(rnd, DType.F16, 48, dim, 0.2f);
        Tensor up = random16(rnd, DType.F16, 48, dim, 0.2f);
        Tensor[] qkv = {random16(rnd, DType.BF16, 32, dim, 0.2f), random16(rnd, DType.BF16, 20, dim, 0.2f)};
        GemmPlan swiglu = GemmPlan.of(48, dim);
        GemmPlan store = GemmPlan.of(new int[] {32, 20}, dim);
        // several slices, so the combine order is exercised too
        assertThat(swiglu.slices()).isEqualTo(4);
        assertThat(store.slices()).isEqualTo(4);
        MmaEmulator.Packed[] gu = packAll(gate, up);
        MmaEmulator.Packed[] st = packAll(qkv);
        float[] mine = randomX(rnd, 1, dim)[0];
        float mineInv = 0.8f;
        float[] g = randomX(rnd, 1, dim)[0];
        float[][] alone = run(swiglu, gu, store, st, new float[][] {mine}, new float[] {mineInv}, g, 0);
        List<Integer> sizes = new ArrayList<>();
        for (int b = 1; b <= 64; b++) {
            sizes.add(b);
        }
        sizes.addAll(List.of(65, 100, 131)); // more than one block of tokens
        int checked = 0;
        for (int b : sizes) {
            List<Integer> positions = new ArrayList<>();
            if (b <= 64) {
                for (int p = 0; p < b; p++) {
                    positions.add(p);
                }
            } else {
                positions.addAll(List.of(0, 63, 64, b - 1, rnd.nextInt(b)));
            }
            for (int p : positions) {
                float[][] x = randomX(rnd, b, dim); // random neighbours
                float[] inv = new float[b];
                for (int t = 0; t < b; t++) {
                    inv[t] = 0.5f + rnd.nextFloat();
                }
                x[p] = mine.clone();
                inv[p] = mineInv;
                float[][] got = run(swiglu, gu, store, st, x, inv, g, p);
                for (int i = 0; i < 3; i++) {
                    assertThat(got[i]).as("batch %d position %d output %d", b, p, i).isEqualTo(alone[i]);
                }
                checked++;
            }
        }
        System.out.printf("gemm emulation: a token's SwiGLU and stacked Q/K outputs bit-identical alone and in %d batches "
                + "(sizes 1..64 at every position, 65/100/131 at block edges)%n", checked);
    }

    /** Token {@code p}'s outputs of a SWIGLU launch and a two-matrix STORE launch. */
    private static float[][] run(GemmPlan swiglu, MmaEmulator.Packed[] gu, GemmPlan store, MmaEmulator.Packed[] st,
                                 float[][] x, float[] inv, float[] g, int p) {
        float[][] h = new float[x.length][gu[0].rows()];
        MmaEmulator.run(swiglu, gu, new float[][][] {h}, MmaEmulator.SWIGLU, x, inv, g);
        float[][] q = new float[x.length][st[0].rows()];
        float[][] k = new float[x.length][st[1].rows()];
        MmaEmulator.run(store, st, new float[][][] {q, k}, MmaEmulator.STORE, x, inv, g);
        return new float[][] {h[p], q[p], k[p]};
    }

    @Test
    void thePlanDependsOnTheShapeOnlyAndFitsHopperLimits() {
        Random rnd = new Random(9);
        List<int[]> shapes = new ArrayList<>(List.of(new int[] {3072, 3072}, new int[] {1024, 3072}, new int[] {8192, 3072},
                new int[] {3072, 8192}, new int[] {32000, 3072}, new int[] {5120, 3072}, new int[] {1, 1}, new int[] {17, 5},
                new int[] {512, 64}));
        for (int i = 0; i < 300; i++) {
            shapes.add(new int[] {1 + rnd.nextInt(40000), 1 + rnd.nextInt(20000)});
        }
        for (int[] s : shapes) {
            GemmPlan p = GemmPlan.of(s[0], s[1]);
            assertThat(GemmPlan.of(s[0], s[1])).isEqualTo(p);
            int kTiles = (s[1] + 15) / 16;
            assertThat(p.rowTiles()).isEqualTo((s[0] + 15) / 16);
            assertThat(p.kTiles()).isEqualTo(kTiles);
            int cap = Math.max(1, Math.min(8, kTiles / 4));
            assertThat(Integer.bitCount(p.slices())).as("power of two").isEqualTo(1);
            assertThat(p.slices()).isBetween(1, cap);
            // the fewest slices that reach the target, unless capped
            assertThat((long) p.rowTiles() * p.slices() >= 2048 || 2 * p.slices() > cap).isTrue();
            assertThat(p.slices() == 1 || (long) p.rowTiles() * (p.slices() / 2) < 2048).isTrue();
            // slices partition the k-tiles, none empty
            assertThat(p.sliceStart(0)).isZero();
            assertThat(p.sliceStart(p.slices())).isEqualTo(kTiles);
            for (int j = 0; j < p.slices(); j++) {
                assertThat(p.sliceStart(j + 1)).isGreaterThan(p.sliceStart(j));
            }
            // sm_90: 1024 threads a block, 48 KiB of shared memory without opt-in, grid.x < 2^31, grid.y <= 65535
            assertThat(p.threads()).isLessThanOrEqualTo(1024);
            assertThat(p.sharedBytes(2)).isLessThanOrEqualTo(48 * 1024);
            assertThat(p.gridX()).isPositive();
        }
        assertThat(GemmPlan.gridY(1)).isEqualTo(1);
        assertThat(GemmPlan.gridY(64)).isEqualTo(1);
        assertThat(GemmPlan.gridY(65)).isEqualTo(2);
        assertThat(GemmPlan.gridY(4_000_000)).isLessThanOrEqualTo(65535);
        assertThatThrownBy(() -> GemmPlan.gridY(0)).hasMessageContaining("0 tokens");
        assertThatThrownBy(() -> GemmPlan.of(new int[] {1, 2, 3, 4}, 8)).hasMessageContaining("one to three");
        // the 2.9B model (dim 3072, hidden 8192, kv 1024, vocab 32000)
        GemmPlan qkv = GemmPlan.of(new int[] {3072, 1024, 1024}, 3072);
        assertThat(qkv.rowTiles()).isEqualTo(320);
        assertThat(qkv.slices()).isEqualTo(8);
        assertThat(GemmPlan.of(3072, 3072).slices()).isEqualTo(8);
        assertThat(GemmPlan.of(8192, 3072).slices()).isEqualTo(4);
        assertThat(GemmPlan.of(3072, 8192).slices()).isEqualTo(8);
        assertThat(GemmPlan.of(32000, 3072).slices()).isEqualTo(2);
    }

    @Test
    void errorFiguresAtTheLargeModelsInnerDimensions() {
        Random rnd = new Random(11);
        for (DType type : List.of(DType.F16, DType.BF16)) {
            for (int dim : new int[] {3072, 8192}) {
                Tensor w = random16(rnd, type, 32, dim, (float) (1 / Math.sqrt(dim)));
                float[][] x = randomX(rnd, 3, dim);
                // the slices of wo / w2 (3072 rows), over this matrix's 32 rows
                GemmPlan p = new GemmPlan(2, MmaPacking.kTiles(dim), GemmPlan.of(3072, dim).slices());
                float[][] out = new float[3][32];
                MmaEmulator.run(p, packAll(w), new float[][][] {out}, MmaEmulator.STORE, x, null, null);
                double[][] ref = reference(w, x, null, null);
                double worstRounded = 0;
                double worstExact = 0;
                double scale = 0;
                for (int t = 0; t < 3; t++) {
                    for (int o = 0; o < 32; o++) {
                        double exact = 0;
                        for (int k = 0; k < dim; k++) {
                            exact += (double) weight(w, o, k) * x[t][k];
                        }
                        worstRounded = Math.max(worstRounded, Math.abs(out[t][o] - ref[t][o]));
                        worstExact = Math.max(worstExact, Math.abs(out[t][o] - exact));
                        scale = Math.max(scale, Math.abs(exact));
                        assertThat((double) out[t][o]).isCloseTo(ref[t][o],
                                org.assertj.core.data.Offset.offset(bound(p, absSum(w, x, null, null, t, o))));
                    }
                }
                System.out.printf("gemm emulation %s k=%d S=%d: max |out - float64(W.round(x))| / max|out| = %.2e, "
                                + "vs float64(W.x) (activation rounding included) = %.2e%n", type, dim, p.slices(),
                        worstRounded / scale, worstExact / scale);
            }
        }
    }

    /** The backend's pw_gemm_* arguments, in order and type, against the parameter list of the built PTX. */
    @Test
    void theLaunchArgumentsMatchTheKernelsParameters() {
        String ptx = new String(KernelManifest.load().verifiedOutput("gemm.compute_80.ptx"), java.nio.charset.StandardCharsets.US_ASCII);
        jcuda.driver.CUdeviceptr p = new jcuda.driver.CUdeviceptr();
        DeviceWeights.Matrix q = new DeviceWeights.Matrix(DType.F16, 3072, 3072, p, null, true);
        DeviceWeights.Matrix k = new DeviceWeights.Matrix(DType.F16, 1024, 3072, p, null, true);
        DeviceWeights.Matrix up = new DeviceWeights.Matrix(DType.BF16, 8192, 3072, p, null, true);
        List<GpuBackend.GemmLaunch> launches = List.of(
                GpuBackend.gemmLaunch(GpuBackend.PW_STORE, new DeviceWeights.Matrix[] {q, k, k},
                        new jcuda.driver.CUdeviceptr[] {p, p, p}, p, p, p, 5),
                GpuBackend.gemmLaunch(GpuBackend.PW_ADD, new DeviceWeights.Matrix[] {q}, new jcuda.driver.CUdeviceptr[] {p}, p,
                        null, null, 1),
                GpuBackend.gemmLaunch(GpuBackend.PW_SWIGLU, new DeviceWeights.Matrix[] {up, up},
                        new jcuda.driver.CUdeviceptr[] {p}, p, p, p, 200));
        for (GpuBackend.GemmLaunch l : launches) {
            int at = ptx.indexOf(".entry " + l.kernel() + "(");
            assertThat(at).as(l.kernel() + " in the PTX").isPositive();
            List<String> params = new ArrayList<>();
            java.util.regex.Matcher m = java.util.regex.Pattern.compile("\\.param \\.(\\w+) " + l.kernel() + "_param_\\d+")
                    .matcher(ptx.substring(at, ptx.indexOf(')', at)));
            while (m.find()) {
                params.add(m.group(1));
            }
            List<String> args = Arrays.stream(l.args()).map(a -> a == null || a instanceof jcuda.driver.CUdeviceptr
                    || a instanceof Long ? "u64" : a instanceof Integer ? "u32" : "?").toList();
            assertThat(args).as(l.kernel()).isEqualTo(params);
            assertThat(l.args()[14]).isEqualTo(l.plan().slices());
        }
        // the stacked Q/K/V plan covers all three matrices' row tiles; SwiGLU's only the gate's, with two regions more
        assertThat(launches.get(0).plan().gridX()).isEqualTo(192 + 64 + 64);
        assertThat(launches.get(2).plan().gridX()).isEqualTo(512);
        assertThat(launches.get(0).kernel()).isEqualTo("pw_gemm_f16_n8");
        assertThat(launches.get(1).kernel()).isEqualTo("pw_gemm_f16_n8");
        assertThat(launches.get(2).kernel()).isEqualTo("pw_gemm_bf16");
        assertThat(launches.get(2).sharedBytes()).isEqualTo((launches.get(2).plan().slices() + 1) * 4096);
    }
}
