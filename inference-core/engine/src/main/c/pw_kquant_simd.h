/*
 * The vector kernels of pw_kquant.c, included once per instruction set with PW_ISA (name suffix),
 * PW_TARGET (the target attribute), PW_DOT4(u, s) (unsigned bytes u times signed bytes s, four adjacent
 * products summed into each int32 lane), PW_SCALED(u, s, v) (the same lanes times the per-lane scales v)
 * and PW_SCALES(a, b) (v: scale a for bytes 0-15, b for bytes 16-31) defined. 256-bit vectors in every
 * path: decode is bound by reading the weights, and one width keeps one code for all three. Each function
 * gives the bits of its scalar twin in pw_kquant.c: the integer sums are exact, the float steps are the
 * same operations in the same order.
 */
#define PW_CAT2(a, b) a##_##b
#define PW_CAT(a, b) PW_CAT2(a, b)
#define PW_FN(name) PW_CAT(name, PW_ISA)
#define PW_FUNC static __attribute__((target(PW_TARGET)))

PW_FUNC inline int32_t PW_FN(hsum)(__m256i v) {
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4e));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xb1));
    return _mm_cvtsi128_si32(s);
}

/* Lane k = the sum of the eight lanes of s[k]. */
PW_FUNC inline __m256i PW_FN(sums8)(const __m256i *s) {
    __m256i q0 = _mm256_hadd_epi32(_mm256_hadd_epi32(s[0], s[1]), _mm256_hadd_epi32(s[2], s[3]));
    __m256i q1 = _mm256_hadd_epi32(_mm256_hadd_epi32(s[4], s[5]), _mm256_hadd_epi32(s[6], s[7]));
    return _mm256_add_epi32(_mm256_permute2x128_si256(q0, q1, 0x20), _mm256_permute2x128_si256(q0, q1, 0x31));
}

/* Eight fp16 block scales, 'stride' bytes apart, as floats (F16C: exact). */
PW_FUNC inline __m256 PW_FN(halves8)(const uint8_t *p, int stride) {
    __m128i h = _mm_setr_epi16((short) rd16(p), (short) rd16(p + stride), (short) rd16(p + 2 * stride),
                               (short) rd16(p + 3 * stride), (short) rd16(p + 4 * stride), (short) rd16(p + 5 * stride),
                               (short) rd16(p + 6 * stride), (short) rd16(p + 7 * stride));
    return _mm256_cvtph_ps(h);
}

/* Eight activation block scales (A32). */
PW_FUNC inline __m256 PW_FN(ascales8)(const uint8_t *a) {
    return _mm256_setr_ps(rdf(a), rdf(a + A32_BYTES), rdf(a + 2 * A32_BYTES), rdf(a + 3 * A32_BYTES),
                          rdf(a + 4 * A32_BYTES), rdf(a + 5 * A32_BYTES), rdf(a + 6 * A32_BYTES), rdf(a + 7 * A32_BYTES));
}

/* Q8_0 and Q4_0: eight blocks at a time, block k of a group into lane k (= block index % 8). */
PW_FUNC float PW_FN(dot_q8_0)(const uint8_t *w, const uint8_t *a, int nb) {
    __m256 acc = _mm256_setzero_ps();
    int b = 0;
    for (; b + 8 <= nb; b += 8) {
        __m256i s[8];
        for (int k = 0; k < 8; k++) {
            __m256i wq = _mm256_loadu_si256((const __m256i *) (w + 34 * (b + k) + 2));
            __m256i aq = _mm256_loadu_si256((const __m256i *) (a + A32_BYTES * (b + k) + 8));
            s[k] = PW_DOT4(_mm256_abs_epi8(wq), _mm256_sign_epi8(aq, wq));
        }
        __m256 dd = _mm256_mul_ps(PW_FN(halves8)(w + 34 * b, 34), PW_FN(ascales8)(a + A32_BYTES * b));
        acc = _mm256_add_ps(acc, _mm256_mul_ps(dd, _mm256_cvtepi32_ps(PW_FN(sums8)(s))));
    }
    float lanes[8];
    _mm256_storeu_ps(lanes, acc);
    for (; b < nb; b++) {
        const uint8_t *wb = w + 34 * b, *ab = a + A32_BYTES * b;
        __m256i wq = _mm256_loadu_si256((const __m256i *) (wb + 2));
        __m256i aq = _mm256_loadu_si256((const __m256i *) (ab + 8));
        int32_t s = PW_FN(hsum)(PW_DOT4(_mm256_abs_epi8(wq), _mm256_sign_epi8(aq, wq)));
        float dd = half_to_float(rd16(wb)) * rdf(ab);
        float t = dd * (float) s;
        lanes[b & 7] = lanes[b & 7] + t;
    }
    return reduce8(lanes);
}

PW_FUNC inline __m256i PW_FN(q4_0_quants)(const uint8_t *qs) {
    __m128i x = _mm_loadu_si128((const __m128i *) qs);
    __m128i m4 = _mm_set1_epi8(15);
    return _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(x, 4), m4), _mm_and_si128(x, m4));
}

PW_FUNC float PW_FN(dot_q4_0)(const uint8_t *w, const uint8_t *a, int nb) {
    __m256 acc = _mm256_setzero_ps();
    int b = 0;
    for (; b + 8 <= nb; b += 8) {
        __m256i s[8];
        for (int k = 0; k < 8; k++) {
            __m256i aq = _mm256_loadu_si256((const __m256i *) (a + A32_BYTES * (b + k) + 8));
            s[k] = PW_DOT4(PW_FN(q4_0_quants)(w + 18 * (b + k) + 2), aq);
        }
        const uint8_t *ab = a + A32_BYTES * b;
        __m256i asum = _mm256_setr_epi32(rdi32(ab + 4), rdi32(ab + 4 + A32_BYTES), rdi32(ab + 4 + 2 * A32_BYTES),
                                         rdi32(ab + 4 + 3 * A32_BYTES), rdi32(ab + 4 + 4 * A32_BYTES),
                                         rdi32(ab + 4 + 5 * A32_BYTES), rdi32(ab + 4 + 6 * A32_BYTES),
                                         rdi32(ab + 4 + 7 * A32_BYTES));
        __m256i sums = _mm256_sub_epi32(PW_FN(sums8)(s), _mm256_slli_epi32(asum, 3));
        __m256 dd = _mm256_mul_ps(PW_FN(halves8)(w + 18 * b, 18), PW_FN(ascales8)(ab));
        acc = _mm256_add_ps(acc, _mm256_mul_ps(dd, _mm256_cvtepi32_ps(sums)));
    }
    float lanes[8];
    _mm256_storeu_ps(lanes, acc);
    for (; b < nb; b++) {
        const uint8_t *wb = w + 18 * b, *ab = a + A32_BYTES * b;
        __m256i aq = _mm256_loadu_si256((const __m256i *) (ab + 8));
        int32_t s = PW_FN(hsum)(PW_DOT4(PW_FN(q4_0_quants)(wb + 2), aq)) - 8 * rdi32(ab + 4);
        float dd = half_to_float(rd16(wb)) * rdf(ab);
        float t = dd * (float) s;
        lanes[b & 7] = lanes[b & 7] + t;
    }
    return reduce8(lanes);
}

/*
 * Q4_K (five = 0) and Q5_K (five = 1): one weight row times n activation rows (n = 1..4, rows
 * astride bytes apart), each super-block's quants unpacked once for all n. Per output and super-block
 * one exact isum and msum, then kstep, as in the scalar path.
 */
PW_FUNC inline __attribute__((always_inline)) void PW_FN(rows_q45_k)(const uint8_t *w, const uint8_t *a, int64_t astride,
                                                                     int nb, int five, int n, float *out) {
    const __m256i m4 = _mm256_set1_epi8(15), one = _mm256_set1_epi8(1);
    float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    int bytes = five ? 176 : 144;
    for (int b = 0; b < nb; b++) {
        const uint8_t *wb = w + (int64_t) bytes * b, *ab = a + (int64_t) A256_BYTES * b;
        const uint8_t *qs = wb + (five ? 48 : 16);
        uint64_t scales, mins;
        kscales8(wb + 4, &scales, &mins);
        uint8_t sc[8];
        memcpy(sc, &scales, 8);
        __m256i qh = five ? _mm256_loadu_si256((const __m256i *) (wb + 16)) : _mm256_setzero_si256();
        __m256i vacc[4];
        for (int r = 0; r < n; r++) {
            vacc[r] = _mm256_setzero_si256();
        }
        for (int g = 0; g < 4; g++) {
            __m256i x = _mm256_loadu_si256((const __m256i *) (qs + 32 * g));
            __m256i lo = _mm256_and_si256(x, m4);
            __m256i hi = _mm256_and_si256(_mm256_srli_epi16(x, 4), m4);
            if (five) {
                __m256i blo = _mm256_and_si256(_mm256_srl_epi16(qh, _mm_cvtsi32_si128(2 * g)), one);
                __m256i bhi = _mm256_and_si256(_mm256_srl_epi16(qh, _mm_cvtsi32_si128(2 * g + 1)), one);
                lo = _mm256_or_si256(lo, _mm256_slli_epi16(blo, 4));
                hi = _mm256_or_si256(hi, _mm256_slli_epi16(bhi, 4));
            }
            __m256i slo = PW_SCALES(sc[2 * g], sc[2 * g]), shi = PW_SCALES(sc[2 * g + 1], sc[2 * g + 1]);
            for (int r = 0; r < n; r++) {
                const uint8_t *ar = ab + r * astride + 40 + 64 * g;
                vacc[r] = _mm256_add_epi32(vacc[r], PW_SCALED(lo, _mm256_loadu_si256((const __m256i *) ar), slo));
                vacc[r] = _mm256_add_epi32(vacc[r], PW_SCALED(hi, _mm256_loadu_si256((const __m256i *) (ar + 32)), shi));
            }
        }
        /* the min term: sum_j min_j * (sums of its two 16s), the mins widened to pairs of int16 */
        __m128i m8 = _mm_cvtsi64_si128((long long) mins);
        __m256i m16 = _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(m8, m8));
        float d = half_to_float(rd16(wb)), dmin = half_to_float(rd16(wb + 2));
        for (int r = 0; r < n; r++) {
            const uint8_t *ar = ab + r * astride;
            int32_t msum = PW_FN(hsum)(_mm256_madd_epi16(_mm256_loadu_si256((const __m256i *) (ar + 8)), m16));
            acc[r] = kstep(acc[r], d, dmin, rdf(ar), PW_FN(hsum)(vacc[r]), msum);
        }
    }
    for (int r = 0; r < n; r++) {
        out[r] = acc[r];
    }
}

/* Q6_K: as rows_q45_k, with 16 signed scales of 16 values and the -32 offset folded into msum. */
PW_FUNC inline __attribute__((always_inline)) void PW_FN(rows_q6_k)(const uint8_t *w, const uint8_t *a, int64_t astride,
                                                                    int nb, int n, float *out) {
    const __m256i m4 = _mm256_set1_epi8(15), m3 = _mm256_set1_epi8(3);
    float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int b = 0; b < nb; b++) {
        const uint8_t *wb = w + 210 * b, *ab = a + (int64_t) A256_BYTES * b;
        const int8_t *sc = (const int8_t *) (wb + 192);
        __m256i vacc[4];
        for (int r = 0; r < n; r++) {
            vacc[r] = _mm256_setzero_si256();
        }
        for (int h = 0; h < 2; h++) {
            __m256i qa = _mm256_loadu_si256((const __m256i *) (wb + 64 * h));
            __m256i qb = _mm256_loadu_si256((const __m256i *) (wb + 64 * h + 32));
            __m256i hb = _mm256_loadu_si256((const __m256i *) (wb + 128 + 32 * h));
            __m256i q[4];
            q[0] = _mm256_or_si256(_mm256_and_si256(qa, m4), _mm256_slli_epi16(_mm256_and_si256(hb, m3), 4));
            q[1] = _mm256_or_si256(_mm256_and_si256(qb, m4),
                                   _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(hb, 2), m3), 4));
            q[2] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(qa, 4), m4),
                                   _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(hb, 4), m3), 4));
            q[3] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(qb, 4), m4),
                                   _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(hb, 6), m3), 4));
            for (int k = 0; k < 4; k++) {
                __m256i v = PW_SCALES(sc[8 * h + 2 * k], sc[8 * h + 2 * k + 1]);
                for (int r = 0; r < n; r++) {
                    __m256i aq = _mm256_loadu_si256((const __m256i *) (ab + r * astride + 40 + 128 * h + 32 * k));
                    vacc[r] = _mm256_add_epi32(vacc[r], PW_SCALED(q[k], aq, v));
                }
            }
        }
        __m256i sc16 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *) sc));
        float d = half_to_float(rd16(wb + 208));
        for (int r = 0; r < n; r++) {
            const uint8_t *ar = ab + r * astride;
            int64_t msum = PW_FN(hsum)(_mm256_madd_epi16(_mm256_loadu_si256((const __m256i *) (ar + 8)), sc16));
            acc[r] = kstep(acc[r], d, 0.0f, rdf(ar), (int64_t) PW_FN(hsum)(vacc[r]) - 32 * msum, 0);
        }
    }
    for (int r = 0; r < n; r++) {
        out[r] = acc[r];
    }
}

PW_FUNC float PW_FN(dot_q4_k)(const uint8_t *w, const uint8_t *a, int nb) {
    float o;
    PW_FN(rows_q45_k)(w, a, 0, nb, 0, 1, &o);
    return o;
}

PW_FUNC float PW_FN(dot_q5_k)(const uint8_t *w, const uint8_t *a, int nb) {
    float o;
    PW_FN(rows_q45_k)(w, a, 0, nb, 1, 1, &o);
    return o;
}

PW_FUNC float PW_FN(dot_q6_k)(const uint8_t *w, const uint8_t *a, int nb) {
    float o;
    PW_FN(rows_q6_k)(w, a, 0, nb, 1, &o);
    return o;
}

PW_FUNC void PW_FN(dot4_q4_k)(const uint8_t *w, const uint8_t *a, int64_t astride, int nb, float *out) {
    PW_FN(rows_q45_k)(w, a, astride, nb, 0, 4, out);
}

PW_FUNC void PW_FN(dot4_q5_k)(const uint8_t *w, const uint8_t *a, int64_t astride, int nb, float *out) {
    PW_FN(rows_q45_k)(w, a, astride, nb, 1, 4, out);
}

PW_FUNC void PW_FN(dot4_q6_k)(const uint8_t *w, const uint8_t *a, int64_t astride, int nb, float *out) {
    PW_FN(rows_q6_k)(w, a, astride, nb, 4, out);
}

#undef PW_FUNC
#undef PW_FN
#undef PW_CAT
#undef PW_CAT2
