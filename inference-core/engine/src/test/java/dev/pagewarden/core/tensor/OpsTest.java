package dev.pagewarden.core.tensor;

import dev.pagewarden.core.model.DType;
import dev.pagewarden.core.model.Tensor;

import org.assertj.core.data.Offset;
import org.junit.jupiter.api.Test;

import java.util.Arrays;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;

class OpsTest {
    private static final int[] SIZES = {1, 3, 15, 16, 17, 31, 33, 64, 100, 768, 2051};

    @Test
    void dotMatchesFloat64ReferenceInBothImplementations() {
        for (int n : SIZES) {
            float[] a = TestTensors.randomFloats(n + 5, n);
            float[] b = TestTensors.randomFloats(n + 2, n + 1);
            double ref = 0;
            double mag = 0;
            for (int i = 0; i < n; i++) {
                ref += (double) a[5 + i] * b[2 + i];
                mag += Math.abs((double) a[5 + i] * b[2 + i]);
            }
            Offset<Double> tol = Offset.offset(1e-5 * mag + 1e-30);
            assertThat((double) Ops.dot(a, 5, b, 2, n)).as("n=%d", n).isCloseTo(ref, tol);
            assertThat((double) VectorKernels.INSTANCE.dot(a, 5, b, 2, n)).as("vector n=%d", n).isCloseTo(ref, tol);
            assertThat((double) ScalarKernels.INSTANCE.dot(a, 5, b, 2, n)).as("scalar n=%d", n).isCloseTo(ref, tol);
        }
    }

    @Test
    void dotIsTheSameBeforeAndAfterCompilation() {
        float[] a = TestTensors.randomFloats(777, 1);
        float[] b = TestTensors.randomFloats(777, 2);
        float first = Ops.dot(a, 1, b, 0, 775);
        float later = 0;
        for (int i = 0; i < 50_000; i++) {
            later = Ops.dot(a, 1, b, 0, 775);
        }
        assertThat(Float.floatToRawIntBits(later)).isEqualTo(Float.floatToRawIntBits(first));
    }

    @Test
    void rmsnormMatchesReferenceAndWritesOnlyItsRange() {
        for (DType type : new DType[] {DType.F32, DType.F16}) {
            for (int n : SIZES) {
                Tensor weight = TestTensors.random(type, 1, n, 28, n);
                float[] x = TestTensors.randomFloats(n + 3, 2 * n);
                float[] out = new float[n + 4];
                Arrays.fill(out, Float.NaN);
                Ops.rmsnorm(out, 2, x, 3, weight, n, 1e-5f);
                double ss = 0;
                for (int i = 0; i < n; i++) {
                    ss += (double) x[3 + i] * x[3 + i];
                }
                double inv = 1 / Math.sqrt(ss / n + 1e-5);
                for (int i = 0; i < n; i++) {
                    double ref = weight.get(0, i) * inv * x[3 + i];
                    assertThat((double) out[2 + i]).as("%s n=%d i=%d", type, n, i)
                            .isCloseTo(ref, Offset.offset(1e-5 * Math.abs(ref) + 1e-30));
                }
                assertThat(out[0]).isNaN();
                assertThat(out[1]).isNaN();
                assertThat(out[n + 2]).isNaN();
                assertThat(out[n + 3]).isNaN();
            }
        }
    }

    @Test
    void softmaxMatchesReference() {
        for (int n : SIZES) {
            float[] x = TestTensors.randomFloats(n + 2, n);
            for (int i = 0; i < x.length; i++) {
                x[i] *= 20;
            }
            double max = Double.NEGATIVE_INFINITY;
            for (int i = 0; i < n; i++) {
                max = Math.max(max, x[1 + i]);
            }
            double[] ref = new double[n];
            double sum = 0;
            for (int i = 0; i < n; i++) {
                ref[i] = Math.exp(x[1 + i] - max);
                sum += ref[i];
            }
            float before0 = x[0];
            float beforeLast = x[n + 1];
            Ops.softmax(x, 1, n);
            for (int i = 0; i < n; i++) {
                assertThat((double) x[1 + i]).as("n=%d i=%d", n, i).isCloseTo(ref[i] / sum, Offset.offset(1e-6));
            }
            assertThat(x[0]).isEqualTo(before0);
            assertThat(x[n + 1]).isEqualTo(beforeLast);
        }
    }

    @Test
    void swigluAxpyAndAddMatchReference() {
        for (int n : SIZES) {
            float[] gate = TestTensors.randomFloats(n + 4, n);
            float[] up = TestTensors.randomFloats(n + 4, n + 1);
            float[] g0 = gate.clone();
            Ops.swiglu(gate, up, 2, n);
            for (int i = 0; i < n + 4; i++) {
                if (i < 2 || i >= n + 2) {
                    assertThat(gate[i]).isEqualTo(g0[i]);
                } else {
                    double g = g0[i];
                    double ref = g / (1 + Math.exp(-g)) * up[i];
                    assertThat((double) gate[i]).isCloseTo(ref, Offset.offset(1e-6));
                }
            }

            float[] acc = TestTensors.randomFloats(n + 1, 3 * n);
            float[] v = TestTensors.randomFloats(n + 2, 4 * n);
            float[] acc0 = acc.clone();
            Ops.axpy(acc, 1, 0.37f, v, 2, n);
            assertThat(acc[0]).isEqualTo(acc0[0]);
            for (int i = 0; i < n; i++) {
                assertThat((double) acc[1 + i]).isCloseTo(acc0[1 + i] + 0.37 * v[2 + i], Offset.offset(1e-6));
            }

            float[] y = TestTensors.randomFloats(n + 3, 5 * n);
            float[] x = TestTensors.randomFloats(n, 6 * n);
            float[] x0 = x.clone();
            Ops.add(x, 0, y, 3, n);
            for (int i = 0; i < n; i++) {
                assertThat(x[i]).isEqualTo(x0[i] + y[3 + i]); // one rounding: exact in float
            }
        }
    }

    @Test
    void softmaxAndSwigluAreDeterministicAfterCompilation() {
        float[] base = TestTensors.randomFloats(513, 9);
        float[] first = base.clone();
        Ops.softmax(first, 0, 513);
        float[] later = null;
        for (int i = 0; i < 20_000; i++) {
            later = base.clone();
            Ops.softmax(later, 0, 513);
        }
        assertArrayEquals(TestTensors.bits(first), TestTensors.bits(later));
    }

    /** The attention output kernel gives the bits of one axpy per position, in both implementations. */
    @Test
    void outputRowKernelMatchesOneRowAtATime() {
        for (RowKernels k : new RowKernels[] {VectorKernels.INSTANCE, ScalarKernels.INSTANCE}) {
            for (int n : new int[] {1, 15, 16, 17, 48, 64, 100}) {
                for (int count : new int[] {1, 15, 16, 17, 33, 50}) {
                    long stride = 4L * (n + 3) + 4; // rows further apart than their length, unaligned
                    java.lang.foreign.MemorySegment mem =
                            TestTensors.randomSegment(stride * (count + 1) + 4L * n + 64, 31L * n + count);
                    long off = 8;
                    float[] scales = TestTensors.randomFloats(count + 2, n + 7L * count);
                    float[] acc = TestTensors.randomFloats(n + 3, 5L * n + count);
                    float[] one = acc.clone();
                    k.axpyRows(acc, 2, scales, 2, mem, off, stride, count, n);
                    for (int j = 0; j < count; j++) {
                        k.axpy(one, 2, scales[2 + j], mem, off + j * stride, n);
                    }
                    assertArrayEquals(TestTensors.bits(one), TestTensors.bits(acc), k.name() + " axpyRows n=" + n);
                }
            }
        }
    }

    /**
     * Scores over a K panel (dimension-major: element e of slot j at float e*slots + j) are, in
     * both implementations, the fma chain over the dimensions written out here, for full and
     * partial pages and any number of slots per page; and a partial page's slots from count on are
     * never read (the segment ends right after the last dimension's last written slot, so such a
     * read would fail).
     */
    @Test
    void panelScoresAreTheChainOverDimensionsAndReadOnlyWrittenSlots() {
        for (RowKernels k : new RowKernels[] {VectorKernels.INSTANCE, ScalarKernels.INSTANCE}) {
            for (int slots : new int[] {16, 32, 8, 5}) {
                for (int n : new int[] {1, 16, 17, 64, 100}) {
                    for (int count = 1; count <= slots; count++) {
                        long off = 12; // unaligned
                        long bytes = off + 4L * ((long) (n - 1) * slots + count);
                        java.lang.foreign.MemorySegment mem =
                                TestTensors.randomSegment(bytes + 64, 97L * n + 13L * slots + count).asSlice(0, bytes);
                        float[] q = TestTensors.randomFloats(n + 3, 5L * n + count);
                        float[] out = new float[count + 2];
                        k.panelScores(mem, off, slots, count, n, q, 3, out, 1);
                        for (int j = 0; j < count; j++) {
                            float want = 0f;
                            for (int e = 0; e < n; e++) {
                                want = Math.fma(mem.get(Tensor.F32_LE, off + 4L * ((long) e * slots + j)), q[3 + e], want);
                            }
                            assertThat(Float.floatToRawIntBits(out[1 + j]))
                                    .as("%s slots=%d n=%d count=%d slot %d", k.name(), slots, n, count, j)
                                    .isEqualTo(Float.floatToRawIntBits(want));
                        }
                        assertThat(out[0]).isZero();
                        assertThat(out[count + 1]).isZero();
                    }
                }
            }
        }
    }

    /** Two heads' attention outputs in one loop: the bits of two axpyRows calls, shared (GQA) runs included. */
    @Test
    void twoHeadOutputKernelMatchesOneHeadAtATime() {
        for (RowKernels k : new RowKernels[] {VectorKernels.INSTANCE, ScalarKernels.INSTANCE}) {
            for (int n : new int[] {16, 17, 32, 64, 100, 128}) {
                for (int count : new int[] {1, 15, 16, 17, 33}) {
                    long stride = 4L * n + 8;
                    long run = stride * count + 12;
                    java.lang.foreign.MemorySegment mem = TestTensors.randomSegment(3 * run + 64, 17L * n + count);
                    float[] scales = TestTensors.randomFloats(2 * count + 5, 3L * n + count);
                    for (long offB : new long[] {4 + 2 * run, 4}) { // separate runs, then one shared run
                        float[] acc = TestTensors.randomFloats(2 * n + 9, 7L * n + count);
                        float[] two = acc.clone();
                        k.axpyRows(acc, 3, scales, 1, mem, 4, stride, count, n);
                        k.axpyRows(acc, 6 + n, scales, 3 + count, mem, offB, stride, count, n);
                        k.axpyRows2(two, 3, 6 + n, scales, 1, 3 + count, mem, 4, offB, stride, count, n);
                        assertArrayEquals(TestTensors.bits(acc), TestTensors.bits(two),
                                k.name() + " axpyRows2 n=" + n + " count=" + count + " offB=" + offB);
                    }
                }
            }
        }
    }

    /**
     * Scores of up to eight panels in one loop: the bits of one panelScores call per panel, for
     * every count of panels, with panels of several heads (a shared GQA panel among them) and of
     * several pages in any order, each with its own query.
     */
    @Test
    void multiPanelScoreKernelMatchesOnePanelAtATime() {
        for (RowKernels k : new RowKernels[] {VectorKernels.INSTANCE, ScalarKernels.INSTANCE}) {
            for (int slots : new int[] {16, 32, 5}) {
                for (int n : new int[] {16, 17, 64, 100}) {
                    long panel = 4L * slots * n + 12; // panels apart by more than a panel, unaligned
                    java.lang.foreign.MemorySegment mem = TestTensors.randomSegment(10 * panel + 64, 13L * n + slots);
                    // ten entries from index 1 on: panels 2 and 3 are one (shared), the rest apart and shuffled
                    long[] offs = {0, 4 + 3 * panel, 4, 4, 4 + 7 * panel, 4 + panel, 4 + 9 * panel, 4 + 2 * panel,
                            4 + 5 * panel, 4 + 8 * panel, 4 + 6 * panel};
                    int[] queries = {0, 3, 3 + n, 3 + 2 * n, 3, 3 + n, 3 + 2 * n, 3, 3, 3 + n, 3 + 2 * n};
                    int[] outs = new int[offs.length];
                    for (int g = 0; g < outs.length; g++) {
                        outs[g] = 1 + g * slots;
                    }
                    float[] q = TestTensors.randomFloats(3 * n + 5, n + 3L * slots);
                    for (int runs = 1; runs <= RowKernels.SCORE_RUNS; runs++) {
                        for (int from : new int[] {1, 11 - runs}) {
                            float[] out = new float[offs.length * slots + 2];
                            k.panelScoresN(mem, offs, from, runs, slots, n, q, queries, out, outs);
                            float[] want = new float[out.length];
                            for (int g = from; g < from + runs; g++) {
                                k.panelScores(mem, offs[g], slots, slots, n, q, queries[g], want, outs[g]);
                            }
                            assertArrayEquals(TestTensors.bits(want), TestTensors.bits(out),
                                    k.name() + " slots=" + slots + " n=" + n + " runs=" + runs + " from=" + from);
                        }
                    }
                }
            }
        }
    }

    /** The vector exp (softmax) and SwiGLU give the scalar bits on every input, special values included. */
    @Test
    void vectorExpAndSwigluMatchTheScalarBits() {
        java.util.SplittableRandom rnd = new java.util.SplittableRandom(5);
        float[] special = {Float.NaN, Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY, 0f, -0f, -150f,
                Math.nextUp(-150f), Math.nextDown(-150f), 100f, Math.nextUp(100f), -87.3f, -103.9f, 88.7f, 1e-40f,
                -1e-40f, Float.MIN_VALUE, Float.MAX_VALUE, -Float.MAX_VALUE, 0.5f, -0.5f, 0.34657359f};
        float[] x = new float[20_003];
        for (int i = 0; i < x.length; i++) {
            x[i] = i < special.length ? special[i] : switch (i % 3) {
                case 0 -> (float) rnd.nextDouble(-160, 110);
                case 1 -> (float) rnd.nextDouble(-20, 20);
                default -> Float.intBitsToFloat(rnd.nextInt());
            };
        }
        for (float shift : new float[] {0f, 3.25f, -7f}) {
            float[] v = x.clone();
            VectorKernels.INSTANCE.expShifted(v, 1, x.length - 2, shift);
            for (int i = 1; i < x.length - 1; i++) {
                assertThat(Float.floatToRawIntBits(v[i])).as("exp(%s - %s)", x[i], shift)
                        .isEqualTo(Float.floatToRawIntBits(Ops.exp(x[i] - shift)));
            }
            assertThat(Float.floatToRawIntBits(v[0])).as("untouched").isEqualTo(Float.floatToRawIntBits(x[0]));
        }
        float[] up = TestTensors.randomFloats(x.length, 6);
        float[] gv = x.clone();
        float[] gs = x.clone();
        VectorKernels.INSTANCE.swiglu(gv, up, 2, x.length - 3);
        ScalarKernels.INSTANCE.swiglu(gs, up, 2, x.length - 3);
        assertArrayEquals(TestTensors.bits(gs), TestTensors.bits(gv), "swiglu");
    }

    /** The polynomial exp is within one ulp of StrictMath.exp everywhere softmax and SwiGLU can take it. */
    @Test
    void expIsWithinOneUlpOfStrictMath() {
        java.util.Random rnd = new java.util.Random(42);
        int exact = 0;
        int total = 0;
        for (int i = 0; i < 2_000_000; i++) {
            float x = i < 1_000_000 ? -110f + 200f * rnd.nextFloat() : (float) (rnd.nextGaussian() * 4);
            float want = (float) StrictMath.exp(x);
            float got = Ops.exp(x);
            total++;
            if (Float.floatToRawIntBits(got) == Float.floatToRawIntBits(want)) {
                exact++;
            } else {
                assertThat(Math.abs(got - want)).as("x=%s", x).isLessThanOrEqualTo(Math.ulp(want));
            }
        }
        assertThat(exact).isGreaterThan(total * 99 / 100);
        for (float x : new float[] {0f, -0f, 1f, -1f, 88.72f, 88.73f, 89f, 100f, 101f, -87.3f, -103.9f, -104f,
                -149f, -151f, Float.MIN_VALUE, -Float.MIN_VALUE, 1e-8f, -1e-8f, Float.MAX_VALUE, -Float.MAX_VALUE,
                Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY}) {
            float want = (float) StrictMath.exp(x);
            float got = Ops.exp(x);
            if (Float.isInfinite(want) || want == 0f) {
                assertThat(got).as("x=%s", x).isEqualTo(want);
            } else {
                assertThat(Math.abs(got - want)).as("x=%s", x).isLessThanOrEqualTo(Math.ulp(want));
            }
        }
        assertThat(Ops.exp(Float.NaN)).isNaN();
    }
}
