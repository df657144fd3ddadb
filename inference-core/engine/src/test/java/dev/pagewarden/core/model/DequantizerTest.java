package dev.pagewarden.core.model;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The engine's block decoder against the independent float64 element decoder, on blocks of random
 * bytes (every bit pattern of quants and sub-block scales), and against blocks worked out by hand
 * from ggml's layouts.
 */
class DequantizerTest {

    /** Random blocks of {@code type}: random bytes, with finite fp16 super-block scales. */
    static MemorySegment randomBlocks(DType type, int blocks, long seed) {
        SplittableRandom rnd = new SplittableRandom(seed);
        MemorySegment s = Arena.ofAuto().allocate((long) blocks * type.blockBytes() + 3).asSlice(3); // unaligned
        for (long p = 0; p < s.byteSize(); p++) {
            s.set(ValueLayout.JAVA_BYTE, p, (byte) rnd.nextInt(256));
        }
        for (int i = 0; i < blocks; i++) {
            long b = (long) i * type.blockBytes();
            switch (type) {
                case Q8_0, Q4_0 -> s.set(Tensor.I16_LE, b, Float.floatToFloat16((float) rnd.nextDouble(-2, 2)));
                case Q4_K, Q5_K -> {
                    s.set(Tensor.I16_LE, b, Float.floatToFloat16((float) rnd.nextDouble(-0.01, 0.01)));
                    s.set(Tensor.I16_LE, b + 2, Float.floatToFloat16((float) rnd.nextDouble(-0.01, 0.01)));
                }
                case Q6_K -> s.set(Tensor.I16_LE, b + 208, Float.floatToFloat16((float) rnd.nextDouble(-0.01, 0.01)));
                case F16 -> s.set(Tensor.I16_LE, b, Float.floatToFloat16((float) rnd.nextDouble(-4, 4)));
                case BF16 -> s.set(Tensor.I16_LE, b, (short) (Float.floatToRawIntBits((float) rnd.nextDouble(-4, 4)) >>> 16));
                case F32 -> s.set(Tensor.F32_LE, b, (float) rnd.nextDouble(-4, 4));
            }
        }
        return s;
    }

    @ParameterizedTest
    @EnumSource(DType.class)
    void rowsAndElementsMatchTheFloat64Reference(DType type) {
        int n = 4 * 256; // whole blocks of every type
        for (long seed = 1; seed <= 20; seed++) {
            MemorySegment s = randomBlocks(type, n / type.blockSize(), seed);
            float[] row = new float[n + 5];
            Dequantizer.row(type, s, 0, n, row, 5);
            double[] ref = ReferenceDequant.row(type, s, 0, n);
            for (int k = 0; k < n; k++) {
                // fp32 decoding rounds once or twice (a product of up to 25 bits, a difference): 2^-22 of the terms
                double tol = Math.abs(ref[k]) * 0x1p-22 + termScale(type, s, k) * 0x1p-22;
                assertThat((double) row[5 + k]).as("%s seed %d element %d", type, seed, k).isCloseTo(ref[k],
                        org.assertj.core.data.Offset.offset(tol));
                assertThat(Float.floatToRawIntBits(Dequantizer.value(type, s, 0, k)))
                        .as("%s element accessor %d", type, k).isEqualTo(Float.floatToRawIntBits(row[5 + k]));
            }
        }
    }

    /** Magnitude of the min term of a Q4_K/Q5_K element (what a difference can round against); 0 otherwise. */
    private static double termScale(DType type, MemorySegment s, int k) {
        if (type != DType.Q4_K && type != DType.Q5_K) {
            return 0;
        }
        long b = (long) (k / 256) * type.blockBytes();
        return Math.abs(Float.float16ToFloat(s.get(Tensor.I16_LE, b + 2))) * 63;
    }

    /**
     * Every fp16 bit pattern against its value worked out in float64 from the IEEE fields (sign,
     * exponent, mantissa; subnormal halves included, which K-quant scales often are): the same
     * number; NaNs keep sign and payload and come out quiet.
     */
    @Test
    void everyHalfConvertsExactly() {
        for (int i = 0; i < 1 << 16; i++) {
            short h = (short) i;
            float got = Dequantizer.halfToFloat(h);
            int exponent = i >>> 10 & 0x1f, mantissa = i & 0x3ff;
            double sign = (i & 0x8000) != 0 ? -1 : 1;
            if (exponent == 0x1f && mantissa != 0) {
                assertThat(Float.floatToRawIntBits(got)).as("NaN %04x", i)
                        .isEqualTo((i & 0x8000) << 16 | 0x7fc0_0000 | mantissa << 13);
                continue;
            }
            double expected = exponent == 0x1f ? sign * Double.POSITIVE_INFINITY
                    : exponent == 0 ? sign * mantissa * 0x1p-24
                    : sign * (1 + mantissa / 1024.0) * Math.pow(2, exponent - 15);
            assertThat((double) got).as("half %04x", i).isEqualTo(expected);
            assertThat(Float.floatToRawIntBits(got) >>> 31).as("sign of %04x", i).isEqualTo(i >>> 15);
        }
        assertThat(Dequantizer.halfToFloat((short) 0x0001)).isEqualTo(0x1p-24f);
        assertThat(Dequantizer.halfToFloat((short) 0x83ff)).isEqualTo(-0x3ffp-24f);
        assertThat(Dequantizer.halfToFloat((short) 0x0400)).isEqualTo(0x1p-14f);
    }

    @Test
    void handWorkedBlocks() {
        // Q4_0: d = 0.5; byte 3 = 0x9F: element 3 = (15 - 8) * 0.5, element 19 = (9 - 8) * 0.5
        MemorySegment q40 = Arena.ofAuto().allocate(18);
        q40.set(Tensor.I16_LE, 0, Float.floatToFloat16(0.5f));
        q40.set(ValueLayout.JAVA_BYTE, 2 + 3, (byte) 0x9F);
        assertThat(Dequantizer.value(DType.Q4_0, q40, 0, 3)).isEqualTo(3.5f);
        assertThat(Dequantizer.value(DType.Q4_0, q40, 0, 19)).isEqualTo(0.5f);
        assertThat(Dequantizer.value(DType.Q4_0, q40, 0, 0)).isEqualTo(-4f);

        // Q4_K: d = 1, dmin = 0.25. Sub-block 5 (elements 160..191): scale = low nibble of byte 9
        // | top two bits of byte 1 << 4; min = high nibble of byte 9 | top bits of byte 5 << 4.
        MemorySegment q4k = Arena.ofAuto().allocate(144);
        q4k.set(Tensor.I16_LE, 0, Float.floatToFloat16(1f));
        q4k.set(Tensor.I16_LE, 2, Float.floatToFloat16(0.25f));
        q4k.set(ValueLayout.JAVA_BYTE, 4 + 9, (byte) 0x73);          // scale low 3, min low 7
        q4k.set(ValueLayout.JAVA_BYTE, 4 + 1, (byte) 0b10_000000);   // scale high bits 2 -> scale 35
        q4k.set(ValueLayout.JAVA_BYTE, 4 + 5, (byte) 0b01_000000);   // min high bits 1 -> min 23
        // element 170 = group 2 (bytes 64..95 of qs), high half (>= 32 within the group), byte 64 + 10
        q4k.set(ValueLayout.JAVA_BYTE, 16 + 64 + 10, (byte) 0xC0);   // high nibble 12
        assertThat(Dequantizer.value(DType.Q4_K, q4k, 0, 170)).isEqualTo(35f * 12 - 0.25f * 23);
        // sub-block 1 (elements 32..63): scale = byte 1 & 63 = 0, min = byte 5 & 63 = 0
        assertThat(Dequantizer.value(DType.Q4_K, q4k, 0, 40)).isEqualTo(0f);

        // Q5_K: the same element with its fifth bit: qh byte 10, bit 5 (sub-block 5)
        MemorySegment q5k = Arena.ofAuto().allocate(176);
        q5k.copyFrom(q4k.asSlice(0, 16));
        q5k.set(ValueLayout.JAVA_BYTE, 48 + 64 + 10, (byte) 0xC0);
        q5k.set(ValueLayout.JAVA_BYTE, 16 + 10, (byte) (1 << 5));
        assertThat(Dequantizer.value(DType.Q5_K, q5k, 0, 170)).isEqualTo(35f * 28 - 0.25f * 23);

        // Q6_K: d = 0.5; element 200 = second half, r = 72: quarter 2 (high nibble of ql[64 + 8]),
        // high bits 4..5 of qh[32 + 8], scale 8 + 4 + 0
        MemorySegment q6k = Arena.ofAuto().allocate(210);
        q6k.set(Tensor.I16_LE, 208, Float.floatToFloat16(0.5f));
        q6k.set(ValueLayout.JAVA_BYTE, 64 + 8, (byte) 0x50);           // low bits 5
        q6k.set(ValueLayout.JAVA_BYTE, 128 + 32 + 8, (byte) 0b10_0000); // high bits 2 -> q = 37
        q6k.set(ValueLayout.JAVA_BYTE, 192 + 12, (byte) -3);
        assertThat(Dequantizer.value(DType.Q6_K, q6k, 0, 200)).isEqualTo(0.5f * -3 * (37 - 32));
        // element 201: same scale, all bits zero: q - 32 = -32
        assertThat(Dequantizer.value(DType.Q6_K, q6k, 0, 201)).isEqualTo(0.5f * -3 * -32);
        // element 0: scale byte 192 is zero
        assertThat(Dequantizer.value(DType.Q6_K, q6k, 0, 0)).isEqualTo(-0f);
    }

    @Test
    void tensorsRejectRowsThatAreNotWholeBlocks() {
        MemorySegment s = Arena.ofAuto().allocate(DType.Q4_K.bytesFor(512));
        assertThat(new Tensor("t", DType.Q4_K, 2, 256, s).rowBytes()).isEqualTo(144);
        assertThatThrownBy(() -> new Tensor("t", DType.Q6_K, 4, 128, s))
                .hasMessageContaining("Q6_K").hasMessageContaining("256");
    }
}
