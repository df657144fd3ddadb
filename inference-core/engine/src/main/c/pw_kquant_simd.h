/*
 * The vector kernels of pw_kquant.c, included once per instruction set with these defined: PW_ISA (name
 * suffix), PW_TARGET (the target attribute), PW_DOT4(u, s) (unsigned bytes u times signed bytes s, four
 * adjacent products summed into each int32 lane), PW_SCALED(u, s, v) (the PW_DOT4 lanes times the per-lane
 * scales v), PW_SCALES(a, b) (v: scale a for bytes 0-15, b for bytes 16-31) and PW_Q8_BIASED (1: Q8_0
 * weights taken as w + 128).
 * 256-bit vectors in every path: decode is bound by reading the weights, and one width keeps one code for
 * all three. Each function gives the bits of its scalar twin in pw_kquant.c: the integer sums are exact,
 * the float steps are the same operations in the same order.
 */
#define PW_CAT2(a, b) a##_##b
#define PW_CAT(a, b) PW_CAT2(a, b)
#define PW_FN(name) PW_CAT(name, PW_ISA)
#define PW_FUNC static __attribute__((target(PW_TARGET), unused))

PW_FUNC inline int32_t PW_FN(hsum)(__m256i v) {
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4e));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xb1));
    return _mm_cvtsi128_si32(s);
}

/*
 * Q8_0 and Q4_0: one weight row times n activation rows (n = 1..4, rows astride bytes apart), eight
 * blocks at a time, each weight block loaded and unpacked once for all n. The eight blocks' products
 * meet in hadds taken in pairs of blocks (0, 2), (4, 6), (1, 3), (5, 7), so that the exact block sums
 * end in the lanes PW_LANE(k) of one vector; the float lanes after it keep that order, and the tail
 * blocks add to the same lanes as in the scalar path (block b into lane b % 8).
 */
#ifndef PW_LANE
#define PW_LANE(k) (((k) & 1) * 4 + (k) / 2)
#endif

/* The eight fp16 scales of a group of blocks 'stride' bytes apart, in PW_LANE order (F16C: exact). */
PW_FUNC inline __m256 PW_FN(wscales8)(const uint8_t *p, int stride) {
    __m128i h = _mm_setr_epi16((short) rd16(p), (short) rd16(p + 2 * stride), (short) rd16(p + 4 * stride),
                               (short) rd16(p + 6 * stride), (short) rd16(p + stride), (short) rd16(p + 3 * stride),
                               (short) rd16(p + 5 * stride), (short) rd16(p + 7 * stride));
    return _mm256_cvtph_ps(h);
}

/* The scales d and sums of eight activation blocks (A32 heads h, 8 bytes each), in PW_LANE order:
 * parted into floats and ints, then placed (moves only, no arithmetic). */
PW_FUNC inline void PW_FN(aheads8)(const uint8_t *h, __m256 *d, __m256i *sum) {
    __m256 y0 = _mm256_loadu_ps((const float *) h), y1 = _mm256_loadu_ps((const float *) (h + 32));
    /* [d0 d1 d4 d5 | d2 d3 d6 d7] -> [d0 d2 d4 d6 | d1 d3 d5 d7] */
    const __m256i order = _mm256_setr_epi32(0, 4, 2, 6, 1, 5, 3, 7);
    *d = _mm256_permutevar8x32_ps(_mm256_shuffle_ps(y0, y1, 0x88), order);
    *sum = _mm256_castps_si256(_mm256_permutevar8x32_ps(_mm256_shuffle_ps(y0, y1, 0xdd), order));
}

/* Q4_0's 32 nibbles as bytes in value order: the 16 bytes in both halves, the upper half shifted by 4. */
PW_FUNC inline __m256i PW_FN(q4_0_quants)(const uint8_t *qs) {
    __m256i x = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *) qs));
    return _mm256_and_si256(_mm256_srlv_epi64(x, _mm256_setr_epi64x(0, 0, 4, 4)), _mm256_set1_epi8(15));
}

/*
 * A block's weights as the unsigned operand u of PW_DOT4, and what its activations need first: Q4_0 the
 * nibbles (the sums then 8 * the activation sum too high); Q8_0 w + 128 where PW_Q8_BIASED (the sums
 * 128 * the activation sum too high), else |w| with w's signs moved onto the activations (*sg = w).
 */
PW_FUNC inline __m256i PW_FN(q32_weights)(const uint8_t *qs, int q4, __m256i *sg) {
    if (q4) {
        return PW_FN(q4_0_quants)(qs);
    }
    __m256i x = _mm256_loadu_si256((const __m256i *) qs);
#if PW_Q8_BIASED
    (void) sg;
    return _mm256_xor_si256(x, _mm256_set1_epi8((char) 0x80));
#else
    *sg = x;
    return _mm256_abs_epi8(x);
#endif
}

/* The exact dot product lanes of one block: weights u (and signs sg, see q32_weights), activations at aq. */
PW_FUNC inline __m256i PW_FN(q32_dot)(__m256i u, __m256i sg, const uint8_t *aq, int q4) {
    __m256i a = _mm256_loadu_si256((const __m256i *) aq);
    if (!q4 && !PW_Q8_BIASED) {
        a = _mm256_sign_epi8(a, sg);
    }
    return PW_DOT4(u, a);
}

/* The offset of q32_weights: the exact sums lie the activation sum shifted left by this too high (-1: none). */
#ifndef PW_Q32_SHIFT
#define PW_Q32_SHIFT(q4) ((q4) ? 3 : PW_Q8_BIASED ? 7 : -1)
#endif

/* The tail: one block alone (weight quants qs, activation quants aq and head h), its exact sum. */
PW_FUNC inline int32_t PW_FN(block_sum)(const uint8_t *qs, const uint8_t *aq, const uint8_t *h, int q4) {
    __m256i sg = _mm256_setzero_si256();
    __m256i u = PW_FN(q32_weights)(qs, q4, &sg);
    int32_t s = PW_FN(hsum)(PW_FN(q32_dot)(u, sg, aq, q4));
    return PW_Q32_SHIFT(q4) < 0 ? s : s - (rdi32(h + 4) << PW_Q32_SHIFT(q4));
}

PW_FUNC inline __attribute__((always_inline)) void PW_FN(rows_q8_0_q4_0)(const uint8_t *w, const uint8_t *a,
                                                                         int64_t astride, int nb, int q4, int n,
                                                                         float *out) {
    const int bytes = q4 ? 18 : 34;
    __m256 acc[4];
    for (int r = 0; r < n; r++) {
        acc[r] = _mm256_setzero_ps();
    }
    int b = 0;
    for (; b + 8 <= nb; b += 8) {
        const uint8_t *wg = w + (int64_t) bytes * b;
        /* per row: t[r][j] = the hadd of blocks (0, 2), (4, 6), (1, 3), (5, 7) for j = 0..3 */
        __m256i t[4][4];
        for (int j = 0; j < 4; j++) {
            int k0 = (j & 1) * 4 + j / 2; /* blocks k0 and k0 + 2 */
            __m256i sg0 = _mm256_setzero_si256(), sg1 = _mm256_setzero_si256();
            __m256i u0 = PW_FN(q32_weights)(wg + bytes * k0 + 2, q4, &sg0);
            __m256i u1 = PW_FN(q32_weights)(wg + bytes * (k0 + 2) + 2, q4, &sg1);
            for (int r = 0; r < n; r++) {
                const uint8_t *ar = A32_Q(a + r * astride, nb, b + k0);
                t[r][j] = _mm256_hadd_epi32(PW_FN(q32_dot)(u0, sg0, ar, q4),
                                            PW_FN(q32_dot)(u1, sg1, ar + 2 * 32, q4));
            }
        }
        __m256 dw = PW_FN(wscales8)(wg, bytes);
        for (int r = 0; r < n; r++) {
            __m256 da;
            __m256i asum;
            PW_FN(aheads8)(A32_HEAD(a + r * astride, b), &da, &asum);
            /* lanes 0-3: partial sums of blocks 0, 2, 4, 6 from the low halves, lanes 4-7: those of 1, 3,
             * 5, 7 from the low halves; the high halves' in hi: the halves crossed and added */
            __m256i even = _mm256_hadd_epi32(t[r][0], t[r][1]), odd = _mm256_hadd_epi32(t[r][2], t[r][3]);
            __m256i s = _mm256_add_epi32(_mm256_permute2x128_si256(even, odd, 0x20),
                                         _mm256_permute2x128_si256(even, odd, 0x31));
            if (PW_Q32_SHIFT(q4) >= 0) {
                s = _mm256_sub_epi32(s, _mm256_slli_epi32(asum, PW_Q32_SHIFT(q4)));
            }
            __m256 dd = _mm256_mul_ps(dw, da);
            acc[r] = _mm256_add_ps(acc[r], _mm256_mul_ps(dd, _mm256_cvtepi32_ps(s)));
        }
    }
    for (int r = 0; r < n; r++) {
        float lanes[8];
        _mm256_storeu_ps(lanes, acc[r]);
        const uint8_t *ar = a + r * astride;
        for (int c = b; c < nb; c++) {
            const uint8_t *wb = w + (int64_t) bytes * c, *ab = A32_HEAD(ar, c);
            int32_t s = PW_FN(block_sum)(wb + 2, A32_Q(ar, nb, c), ab, q4);
            float dd = half_to_float(rd16(wb)) * rdf(ab);
            float t = dd * (float) s;
            lanes[PW_LANE(c & 7)] = lanes[PW_LANE(c & 7)] + t;
        }
        out[r] = PW_REDUCE8(lanes, PW_LANE);
    }
}

PW_FUNC float PW_FN(dot_q8_0)(const uint8_t *w, const uint8_t *a, int nb) {
    float o;
    PW_FN(rows_q8_0_q4_0)(w, a, 0, nb, 0, 1, &o);
    return o;
}

PW_FUNC float PW_FN(dot_q4_0)(const uint8_t *w, const uint8_t *a, int nb) {
    float o;
    PW_FN(rows_q8_0_q4_0)(w, a, 0, nb, 1, 1, &o);
    return o;
}

PW_FUNC void PW_FN(dot4_q8_0)(const uint8_t *w, const uint8_t *a, int64_t astride, int nb, float *out) {
    PW_FN(rows_q8_0_q4_0)(w, a, astride, nb, 0, 4, out);
}

PW_FUNC void PW_FN(dot4_q4_0)(const uint8_t *w, const uint8_t *a, int64_t astride, int nb, float *out) {
    PW_FN(rows_q8_0_q4_0)(w, a, astride, nb, 1, 4, out);
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
        /* two sums per row (the low and the high nibbles), so that no one chain of adds is the bound */
        __m256i vacc[4], vacc2[4];
        for (int r = 0; r < n; r++) {
            vacc[r] = _mm256_setzero_si256();
            vacc2[r] = _mm256_setzero_si256();
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
                vacc[r] = PW_SCALED_ACC(vacc[r], lo, _mm256_loadu_si256((const __m256i *) ar), slo);
                vacc2[r] = PW_SCALED_ACC(vacc2[r], hi, _mm256_loadu_si256((const __m256i *) (ar + 32)), shi);
            }
        }
        /* the min term: sum_j min_j * (sums of its two 16s), the mins widened to pairs of int16 */
        __m128i m8 = _mm_cvtsi64_si128((long long) mins);
        __m256i m16 = _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(m8, m8));
        float d = half_to_float(rd16(wb)), dmin = half_to_float(rd16(wb + 2));
        for (int r = 0; r < n; r++) {
            const uint8_t *ar = ab + r * astride;
            int32_t msum = PW_FN(hsum)(_mm256_madd_epi16(_mm256_loadu_si256((const __m256i *) (ar + 8)), m16));
            acc[r] = kstep(acc[r], d, dmin, rdf(ar), PW_FN(hsum)(_mm256_add_epi32(vacc[r], vacc2[r])), msum);
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
        __m256i vacc[4], vacc2[4];
        for (int r = 0; r < n; r++) {
            vacc[r] = _mm256_setzero_si256();
            vacc2[r] = _mm256_setzero_si256();
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
                    if (k & 1) {
                        vacc2[r] = PW_SCALED_ACC(vacc2[r], q[k], aq, v);
                    } else {
                        vacc[r] = PW_SCALED_ACC(vacc[r], q[k], aq, v);
                    }
                }
            }
        }
        __m256i sc16 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *) sc));
        float d = half_to_float(rd16(wb + 208));
        for (int r = 0; r < n; r++) {
            const uint8_t *ar = ab + r * astride;
            int64_t msum = PW_FN(hsum)(_mm256_madd_epi16(_mm256_loadu_si256((const __m256i *) (ar + 8)), sc16));
            acc[r] = kstep(acc[r], d, 0.0f, rdf(ar), (int64_t) PW_FN(hsum)(_mm256_add_epi32(vacc[r], vacc2[r])) - 32 * msum, 0);
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
