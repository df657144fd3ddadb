/*
 * Quantized matrix times activation rows for the engine's CPU backend, called through the Java FFM API
 * (dev.pagewarden.core.tensor.NativeKernels). Weights stay in ggml's block layouts where they lie;
 * activations are first rounded to 8 bits (pw_quantize), then each output is an integer dot product per
 * block, scaled in float.
 *
 * Determinism: for a given weight type every instruction-set path (scalar C, AVX2, AVX-VNNI, AVX-512
 * VNNI) gives the same bits, and one output never depends on the batch size, its row in the batch or
 * the rows another thread computes: integer sums are exact (their order does not matter), and the float
 * operations per block and their order are fixed by the row length alone (see dot_* below). The file is
 * compiled with -ffp-contract=off so that no multiply and add are fused in one path and not another.
 *
 * Activation formats (one row of n floats):
 *  - A32 (for Q8_0, Q4_0): n/32 heads of 8 bytes (float d, int32 sum of q), then the n/32 blocks'
 *    int8 q[32] back to back (eight heads and two blocks' quants each fill one 64-byte load);
 *  - A256 (for the K-quants): n/256 blocks of 296 bytes: float d, 4 unused bytes, int16 sums of each 16
 *    q, int8 q[256].
 * x[i] is represented by q[i] * d, q in [-127, 127], d = amax / 127 of the block (|x - q*d| <= d/2).
 */
#include <math.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#define PW_EXPORT __attribute__((visibility("default")))

enum { T_Q8_0 = 0, T_Q4_0 = 1, T_Q4_K = 2, T_Q5_K = 3, T_Q6_K = 4, T_COUNT = 5 };
enum { ISA_SCALAR = 0, ISA_AVX2 = 1, ISA_AVXVNNI = 2, ISA_AVX512VNNI = 3, ISA_COUNT = 4 };

#define A32_BYTES 40
/* block b's head and quants in an A32 row a of nb blocks */
#define A32_HEAD(a, b) ((a) + 8 * (int64_t) (b))
#define A32_Q(a, nb, b) ((a) + 8 * (int64_t) (nb) + 32 * (int64_t) (b))
#define A256_BYTES 296

static inline uint16_t rd16(const uint8_t *p) { return (uint16_t) (p[0] | p[1] << 8); }
static inline float rdf(const uint8_t *p) { float f; memcpy(&f, p, 4); return f; }
static inline int32_t rdi32(const uint8_t *p) { int32_t v; memcpy(&v, p, 4); return v; }
static inline int16_t rdi16(const uint8_t *p) { int16_t v; memcpy(&v, p, 2); return v; }

/* IEEE half to float, exact (subnormal halves become normal floats). */
static inline float half_to_float(uint16_t h) {
    uint32_t sign = (uint32_t) (h & 0x8000) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff, bits;
    float f;
    if (exp == 0) {
        f = (float) man * 5.9604644775390625e-8f; /* man * 2^-24, exact */
        memcpy(&bits, &f, 4);
        bits |= sign;
    } else if (exp == 31) {
        bits = sign | 0x7f800000u | man << 13;
    } else {
        bits = sign | (exp + 112) << 23 | man << 13;
    }
    memcpy(&f, &bits, 4);
    return f;
}

/* Sub-block j's 6-bit scale and min of a Q4_K/Q5_K super-block (12 packed bytes). */
static inline void kscale(const uint8_t *sc, int j, int *scale, int *min) {
    if (j < 4) {
        *scale = sc[j] & 63;
        *min = sc[j + 4] & 63;
    } else {
        *scale = (sc[j + 4] & 15) | (sc[j - 4] >> 6) << 4;
        *min = (sc[j + 4] >> 4) | (sc[j] >> 6) << 4;
    }
}

/*
 * All eight 6-bit scales (bytes 0-7 of *scales) and mins (of *mins) of a Q4_K/Q5_K super-block at once,
 * the bytes of kscale: scales 0-3 are the low 6 bits of bytes 0-3, scales 4-7 the low nibbles of bytes
 * 8-11 with the top 2 bits of bytes 0-3 above them; the mins likewise from bytes 4-7 and the high nibbles.
 */
static inline void kscales8(const uint8_t *sc, uint64_t *scales, uint64_t *mins) {
    uint32_t a, b, c;
    memcpy(&a, sc, 4);
    memcpy(&b, sc + 4, 4);
    memcpy(&c, sc + 8, 4);
    uint32_t slo = a & 0x3f3f3f3fu, shi = (c & 0x0f0f0f0fu) | ((a >> 2) & 0x30303030u);
    uint32_t mlo = b & 0x3f3f3f3fu, mhi = ((c >> 4) & 0x0f0f0f0fu) | ((b >> 2) & 0x30303030u);
    *scales = (uint64_t) shi << 32 | slo;
    *mins = (uint64_t) mhi << 32 | mlo;
}

/* The fixed float tail of a K-quant super-block: acc + ((d*da)*isum - (dmin*da)*msum), one rounding each. */
static inline float kstep(float acc, float d, float dmin, float da, int64_t isum, int64_t msum) {
    float dd = d * da;
    float dm = dmin * da;
    float t1 = dd * (float) isum;
    float t2 = dm * (float) msum;
    float t = t1 - t2;
    return acc + t;
}

/*
 * The fixed end of a blocks-of-32 dot product: block b was added to lane b % 8, found at a[at(b % 8)];
 * the lanes pair up so.
 */
#define PW_REDUCE8(a, at) ((((a)[at(0)] + (a)[at(4)]) + ((a)[at(2)] + (a)[at(6)])) \
                           + (((a)[at(1)] + (a)[at(5)]) + ((a)[at(3)] + (a)[at(7)])))
#define PW_IDENTITY(k) (k)

static inline float reduce8(const float *a) { return PW_REDUCE8(a, PW_IDENTITY); }

/* ---------------------------------------------------------------- activations */

static void quantize_block(const float *x, int n, float *d, int8_t *q) {
    float amax = 0.0f;
    int bad = 0;
    for (int i = 0; i < n; i++) {
        float v = fabsf(x[i]);
        if (!isfinite(v)) {
            bad = 1;
        } else if (v > amax) {
            amax = v;
        }
    }
    if (bad || amax == 0.0f) {
        /* a NaN or infinity makes the block's products NaN, as in a float dot product */
        *d = bad ? NAN : 0.0f;
        memset(q, 0, (size_t) n);
        return;
    }
    double id = 127.0 / (double) amax;
    for (int i = 0; i < n; i++) {
        long v = lrint((double) x[i] * id);
        q[i] = (int8_t) (v > 127 ? 127 : v < -127 ? -127 : v);
    }
    *d = (float) ((double) amax / 127.0);
}

PW_EXPORT int64_t pw_act_row_bytes(int32_t format, int32_t n) {
    return format == 0 ? (int64_t) (n / 32) * A32_BYTES : (int64_t) (n / 256) * A256_BYTES;
}

/*
 * Rounds rows [r0, r1) of x (rows of n floats, xStride floats apart) to 8 bits in format 0 (A32) or
 * 1 (A256) into dst, row r at dst + r * pw_act_row_bytes(format, n).
 */
PW_EXPORT void pw_quantize(int32_t format, const float *x, int64_t xStride, int32_t n, int32_t r0, int32_t r1,
                           uint8_t *dst) {
    int64_t rowBytes = pw_act_row_bytes(format, n);
    for (int32_t r = r0; r < r1; r++) {
        const float *xr = x + r * xStride;
        uint8_t *out = dst + r * rowBytes;
        if (format == 0) {
            for (int b = 0; b < n / 32; b++) {
                uint8_t *blk = A32_HEAD(out, b);
                float d;
                int8_t *q = (int8_t *) A32_Q(out, n / 32, b);
                quantize_block(xr + 32 * b, 32, &d, q);
                int32_t s = 0;
                for (int i = 0; i < 32; i++) {
                    s += q[i];
                }
                memcpy(blk, &d, 4);
                memcpy(blk + 4, &s, 4);
            }
        } else {
            for (int b = 0; b < n / 256; b++) {
                uint8_t *blk = out + (int64_t) b * A256_BYTES;
                float d;
                int8_t *q = (int8_t *) (blk + 40);
                quantize_block(xr + 256 * b, 256, &d, q);
                memcpy(blk, &d, 4);
                memset(blk + 4, 0, 4);
                for (int k = 0; k < 16; k++) {
                    int16_t s = 0;
                    for (int i = 0; i < 16; i++) {
                        s = (int16_t) (s + q[16 * k + i]);
                    }
                    memcpy(blk + 8 + 2 * k, &s, 2);
                }
            }
        }
    }
}

/* ---------------------------------------------------------------- scalar kernels (the definition) */

static float dot_q8_0_scalar(const uint8_t *w, const uint8_t *a, int nb) {
    float acc[8] = {0};
    for (int b = 0; b < nb; b++) {
        const uint8_t *wb = w + 34 * b, *ab = A32_HEAD(a, b), *q = A32_Q(a, nb, b);
        int32_t s = 0;
        for (int i = 0; i < 32; i++) {
            s += (int8_t) wb[2 + i] * (int8_t) q[i];
        }
        float dd = half_to_float(rd16(wb)) * rdf(ab);
        float t = dd * (float) s;
        acc[b & 7] = acc[b & 7] + t;
    }
    return reduce8(acc);
}

static float dot_q4_0_scalar(const uint8_t *w, const uint8_t *a, int nb) {
    float acc[8] = {0};
    for (int b = 0; b < nb; b++) {
        const uint8_t *wb = w + 18 * b, *ab = A32_HEAD(a, b);
        const int8_t *q = (const int8_t *) A32_Q(a, nb, b);
        int32_t s = 0;
        for (int i = 0; i < 16; i++) {
            s += (wb[2 + i] & 15) * q[i] + (wb[2 + i] >> 4) * q[16 + i];
        }
        s -= 8 * rdi32(ab + 4);
        float dd = half_to_float(rd16(wb)) * rdf(ab);
        float t = dd * (float) s;
        acc[b & 7] = acc[b & 7] + t;
    }
    return reduce8(acc);
}

static float dot_q45_k_scalar(const uint8_t *w, const uint8_t *a, int nb, int five) {
    float acc = 0.0f;
    int bytes = five ? 176 : 144;
    for (int b = 0; b < nb; b++) {
        const uint8_t *wb = w + (int64_t) bytes * b, *ab = a + (int64_t) A256_BYTES * b;
        const uint8_t *qs = wb + (five ? 48 : 16), *qh = wb + 16;
        const int8_t *q = (const int8_t *) (ab + 40);
        int64_t isum = 0, msum = 0;
        for (int j = 0; j < 8; j++) {
            int scale, min;
            kscale(wb + 4, j, &scale, &min);
            int32_t s = 0;
            for (int l = 0; l < 32; l++) {
                uint8_t byte = qs[32 * (j / 2) + l];
                int v = j % 2 ? byte >> 4 : byte & 15;
                if (five) {
                    v += ((qh[l] >> j) & 1) << 4;
                }
                s += v * q[32 * j + l];
            }
            isum += (int64_t) scale * s;
            msum += (int64_t) min * (rdi16(ab + 8 + 4 * j) + rdi16(ab + 10 + 4 * j));
        }
        acc = kstep(acc, half_to_float(rd16(wb)), half_to_float(rd16(wb + 2)), rdf(ab), isum, msum);
    }
    return acc;
}

static float dot_q4_k_scalar(const uint8_t *w, const uint8_t *a, int nb) { return dot_q45_k_scalar(w, a, nb, 0); }
static float dot_q5_k_scalar(const uint8_t *w, const uint8_t *a, int nb) { return dot_q45_k_scalar(w, a, nb, 1); }

static float dot_q6_k_scalar(const uint8_t *w, const uint8_t *a, int nb) {
    float acc = 0.0f;
    for (int b = 0; b < nb; b++) {
        const uint8_t *wb = w + 210 * b, *ab = a + (int64_t) A256_BYTES * b;
        const int8_t *q = (const int8_t *) (ab + 40), *sc = (const int8_t *) (wb + 192);
        int64_t isum = 0, msum = 0;
        for (int e = 0; e < 256; e++) {
            int half = e / 128, r = e % 128, quarter = r / 32, l = r % 32;
            int low = wb[64 * half + l + (quarter % 2) * 32];
            low = quarter < 2 ? low & 15 : low >> 4;
            int high = (wb[128 + 32 * half + l] >> (2 * quarter)) & 3;
            isum += (int64_t) sc[e / 16] * ((low | high << 4) * q[e]);
        }
        for (int k = 0; k < 16; k++) {
            msum += (int64_t) sc[k] * rdi16(ab + 8 + 2 * k);
        }
        acc = kstep(acc, half_to_float(rd16(wb + 208)), 0.0f, rdf(ab), isum - 32 * msum, 0);
    }
    return acc;
}

/* ---------------------------------------------------------------- vector kernels, one copy per instruction set */

#if defined(__x86_64__)
#include <immintrin.h>

/* AVX2: Q8_0 as |w| times a with w's sign (w + 128 would overflow vpmaddubsw's int16 pairs) */
#define PW_Q8_BIASED 0
/* AVX2: vpmaddubsw (pairs into int16; no saturation: |u*s| <= 128*127) then vpmaddwd */
#define PW_ISA avx2
#define PW_TARGET "avx2,f16c"
#define PW_DOT4(u, s) _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1))
#define PW_SCALED_ACC(acc, u, s, v) _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), v))
#define PW_SCALES(a, b) _mm256_setr_m128i(_mm_set1_epi16((short) (a)), _mm_set1_epi16((short) (b)))
#include "pw_kquant_simd.h"
#undef PW_ISA
#undef PW_TARGET
#undef PW_DOT4
#undef PW_SCALED_ACC

/* AVX-VNNI and AVX-512 VNNI (its 256-bit EVEX form): vpdpbusd; Q8_0 as w + 128 times a, less 128 * sum(a) */
#undef PW_Q8_BIASED
#define PW_Q8_BIASED 1

#define PW_ISA avxvnni
#define PW_TARGET "avx2,f16c,avxvnni"
#define PW_DOT4(u, s) _mm256_dpbusd_avx_epi32(_mm256_setzero_si256(), u, s)
#define PW_SCALED_ACC(acc, u, s, v) _mm256_dpwssd_avx_epi32(acc, _mm256_maddubs_epi16(u, s), v)
#include "pw_kquant_simd.h"
#undef PW_ISA
#undef PW_TARGET
#undef PW_DOT4
#undef PW_SCALED_ACC

#define PW_ISA avx512vnni
#define PW_TARGET "avx2,f16c,avx512f,avx512vl,avx512bw,avx512vnni"
#define PW_DOT4(u, s) _mm256_dpbusd_epi32(_mm256_setzero_si256(), u, s)
#define PW_SCALED_ACC(acc, u, s, v) _mm256_dpwssd_epi32(acc, _mm256_maddubs_epi16(u, s), v)
#include "pw_kquant_simd.h"
#undef PW_ISA
#undef PW_TARGET
#undef PW_DOT4
#undef PW_SCALED_ACC
#undef PW_SCALES
#undef PW_Q8_BIASED

/* AVX-512 VNNI in 512-bit vectors for the K-quants */
#include "pw_kquant_avx512.h"
#endif

typedef float (*dot_fn)(const uint8_t *, const uint8_t *, int);

static const dot_fn TABLE[ISA_COUNT][T_COUNT] = {
    {dot_q8_0_scalar, dot_q4_0_scalar, dot_q4_k_scalar, dot_q5_k_scalar, dot_q6_k_scalar},
#if defined(__x86_64__)
    {dot_q8_0_avx2, dot_q4_0_avx2, dot_q4_k_avx2, dot_q5_k_avx2, dot_q6_k_avx2},
    {dot_q8_0_avxvnni, dot_q4_0_avxvnni, dot_q4_k_avxvnni, dot_q5_k_avxvnni, dot_q6_k_avxvnni},
    {dot_q8_0_z, dot_q4_0_z, dot_q4_k_z, dot_q5_k_z, dot_q6_k_z},
#endif
};

/* One weight row times four activation rows (astride bytes apart): the bits of four dot_fn calls. */
typedef void (*dot4_fn)(const uint8_t *, const uint8_t *, int64_t, int, float *);

static const dot4_fn TABLE4[ISA_COUNT][T_COUNT] = {
    {0, 0, 0, 0, 0},
#if defined(__x86_64__)
    {dot4_q8_0_avx2, dot4_q4_0_avx2, dot4_q4_k_avx2, dot4_q5_k_avx2, dot4_q6_k_avx2},
    {dot4_q8_0_avxvnni, dot4_q4_0_avxvnni, dot4_q4_k_avxvnni, dot4_q5_k_avxvnni, dot4_q6_k_avxvnni},
    {dot4_q8_0_avx512vnni, dot4_q4_0_avx512vnni, dot4_q4_k_z, dot4_q5_k_z, dot4_q6_k_z},
#endif
};

static const int BLOCK[T_COUNT] = {32, 32, 256, 256, 256};

#if defined(__x86_64__)
/* From this many activation rows on, Q8_0 and Q4_0 go through interleaved tiles (AVX-512 VNNI). */
#define TILE_MIN_BATCH 4
/* The K-quants' tiles unpack every weight: from this many rows on that pays. */
#define KTILE_MIN_BATCH 16

/* The calling thread's tile, grown on demand (each engine thread keeps one: no allocation per call). */
static _Thread_local uint8_t *tile_buf;
static _Thread_local size_t tile_cap;

static uint8_t *tile_scratch(int64_t bytes) {
    if ((size_t) bytes > tile_cap) {
        free(tile_buf);
        size_t cap = ((size_t) bytes + 63) / 64 * 64;
        tile_buf = aligned_alloc(64, cap);
        tile_cap = tile_buf != NULL ? cap : 0;
    }
    return tile_buf;
}
#endif

/* Bit i set: instruction set i (ISA_*) runs on this CPU. */
PW_EXPORT int32_t pw_isas(void) {
    int32_t m = 1 << ISA_SCALAR;
#if defined(__x86_64__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c")) {
        m |= 1 << ISA_AVX2;
        if (__builtin_cpu_supports("avxvnni")) {
            m |= 1 << ISA_AVXVNNI;
        }
        if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl")
                && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vnni")) {
            m |= 1 << ISA_AVX512VNNI;
        }
    }
#endif
    return m;
}

/*
 * out[b * outStride + r] = row r of the weights (type, rowBytes apart) times activation row b
 * (actRowBytes apart), for r in [r0, r1) and b in [0, batch): each weight row is read from memory once
 * for the whole batch, and each of its blocks (super-blocks in the K-quants) is unpacked once per four
 * activation rows. Returns 0, or -1 for an unknown type or
 * an instruction set the table lacks (the caller checks pw_isas first).
 */
PW_EXPORT int32_t pw_matmul(int32_t isa, int32_t type, const uint8_t *w, int64_t rowBytes, int32_t cols, int32_t r0,
                            int32_t r1, const uint8_t *act, int64_t actRowBytes, int32_t batch, float *out,
                            int64_t outStride) {
    if (type < 0 || type >= T_COUNT || isa < 0 || isa >= (int32_t) (sizeof TABLE / sizeof TABLE[0])) {
        return -1;
    }
    dot_fn f = TABLE[isa][type];
    dot4_fn f4 = TABLE4[isa][type];
    int nb = cols / BLOCK[type];
#if defined(__x86_64__)
    if (isa == ISA_AVX512VNNI && r1 - r0 >= PW_TILE_ROWS
            && batch >= (type <= T_Q4_0 ? TILE_MIN_BATCH : KTILE_MIN_BATCH)) {
        /* whole tiles of sixteen rows; the rows after the last one go on below */
        int blocks = type <= T_Q4_0, kind = blocks ? type == T_Q4_0 : type - T_Q4_K;
        uint8_t *tile = tile_scratch((blocks ? tile_block_bytes(kind) : ktile_block_bytes(kind)) * nb);
        for (; tile != NULL && r0 + PW_TILE_ROWS <= r1; r0 += PW_TILE_ROWS) {
            (blocks ? tile_fill_z : ktile_fill_z)(w + r0 * rowBytes, rowBytes, nb, kind, tile);
            (blocks ? tile_rows_z : ktile_rows_z)(tile, nb, kind, act, actRowBytes, 0, batch, out, outStride, r0);
        }
    }
#endif
    int32_t full = f4 ? batch / 4 * 4 : 0;
    /* tiles of up to 4 weight rows times groups of 4 activation rows: both stay in L1 while they meet */
    for (int32_t t = r0; t < r1; t += 4) {
        int32_t te = t + 4 < r1 ? t + 4 : r1;
        for (int32_t b = 0; b < full; b += 4) {
            for (int32_t r = t; r < te; r++) {
                float o[4];
                f4(w + r * rowBytes, act + b * actRowBytes, actRowBytes, nb, o);
                for (int k = 0; k < 4; k++) {
                    out[(b + k) * outStride + r] = o[k];
                }
            }
        }
        for (int32_t r = t; r < te; r++) {
            for (int32_t b = full; b < batch; b++) {
                out[b * outStride + r] = f(w + r * rowBytes, act + b * actRowBytes, nb);
            }
        }
    }
    return 0;
}
