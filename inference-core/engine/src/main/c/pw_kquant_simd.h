/*
 * The vector kernels of pw_kquant.c, included once per instruction set with these defined: PW_ISA (name
 * suffix), PW_TARGET (the target attribute), PW_DOT4(u, s) (unsigned bytes u times signed bytes s, four
 * adjacent products summed into each int32 lane), PW_DOT8(u1, s1, u2, s2) (PW_DOT4 of both pairs added;
 * for Q4_0's nibbles), PW_SCALED(u, s, v) (the PW_DOT4 lanes times the per-lane scales v), PW_SCALES(a, b)
 * (v: scale a for bytes 0-15, b for bytes 16-31) and PW_Q8_BIASED (1: Q8_0 weights taken as w + 128).
 * 256-bit vectors in every path: decode is bound by reading the weights, and one width keeps one code for
 * all three. Each function gives the bits of its scalar twin in pw_kquant.c: the integer sums are exact,
 * the float steps are the same operations in the same order.
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

/*
 * Q8_0 and Q4_0: one weight row times n activation rows (n = 1..4, rows astride bytes apart), eight
 * blocks at a time, each weight block loaded and unpacked once for all n. Blocks go in pairs: the low
 * 16 quants of blocks k and k+1 in one vector, the high 16 in another, so a pair's products end in
 * lanes 0-3 (block k) and 4-7 (block k+1), and three hadds give the eight exact block sums. In that
 * vector, and in the float lanes after it, block k of the group lies in lane PW_LANE(k); the tail
 * blocks then add to the same lanes as in the scalar path (block b into lane b % 8).
 */
#ifndef PW_LANE
#define PW_LANE(k) (((k) & 1) * 4 + (k) / 2)
#endif

/* Lane PW_LANE(k) = the sum of lanes 0-3 (k even) or 4-7 (k odd) of v[k / 2]. */
PW_FUNC inline __m256i PW_FN(sums_pairs)(__m256i v0, __m256i v1, __m256i v2, __m256i v3) {
    return _mm256_hadd_epi32(_mm256_hadd_epi32(v0, v1), _mm256_hadd_epi32(v2, v3));
}

/* The eight fp16 scales of a group of blocks 'stride' bytes apart, in PW_LANE order (F16C: exact). */
PW_FUNC inline __m256 PW_FN(wscales8)(const uint8_t *p, int stride) {
    __m128i h = _mm_setr_epi16((short) rd16(p), (short) rd16(p + 2 * stride), (short) rd16(p + 4 * stride),
                               (short) rd16(p + 6 * stride), (short) rd16(p + stride), (short) rd16(p + 3 * stride),
                               (short) rd16(p + 5 * stride), (short) rd16(p + 7 * stride));
    return _mm256_cvtph_ps(h);
}

/* The scales d and sums of eight activation blocks (A32), in PW_LANE order: each block's 8 head bytes
 * broadcast and blended into place, then the floats and ints parted (moves only, no arithmetic). */
PW_FUNC inline void PW_FN(aheads8)(const uint8_t *a, __m256 *d, __m256i *sum) {
#define PW_HEAD(k) _mm256_castpd_ps(_mm256_broadcast_sd((const double *) (a + A32_BYTES * (k))))
    __m256 y0 = _mm256_blend_ps(_mm256_blend_ps(_mm256_blend_ps(PW_HEAD(0), PW_HEAD(2), 0x0c), PW_HEAD(1), 0x30),
                                PW_HEAD(3), 0xc0);
    __m256 y1 = _mm256_blend_ps(_mm256_blend_ps(_mm256_blend_ps(PW_HEAD(4), PW_HEAD(6), 0x0c), PW_HEAD(5), 0x30),
                                PW_HEAD(7), 0xc0);
#undef PW_HEAD
    *d = _mm256_shuffle_ps(y0, y1, 0x88);
    *sum = _mm256_castps_si256(_mm256_shuffle_ps(y0, y1, 0xdd));
}

/* 16 bytes at p, 16 at p + step: one vector. */
PW_FUNC inline __m256i PW_FN(pair16)(const uint8_t *p, int step) {
    return _mm256_loadu2_m128i((const __m128i *) (p + step), (const __m128i *) p);
}

/* The tail: block b alone, its exact sum (q4 = 1: Q4_0's unsigned nibbles, less 8 * the activation sum). */
PW_FUNC inline int32_t PW_FN(block_sum)(const uint8_t *wq, const uint8_t *ab, int q4) {
    __m256i aq = _mm256_loadu_si256((const __m256i *) (ab + 8));
    if (q4) {
        __m128i x = _mm_loadu_si128((const __m128i *) wq);
        __m128i m4 = _mm_set1_epi8(15);
        __m256i u = _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(x, 4), m4), _mm_and_si128(x, m4));
        return PW_FN(hsum)(PW_DOT4(u, aq)) - 8 * rdi32(ab + 4);
    }
    __m256i wv = _mm256_loadu_si256((const __m256i *) wq);
    return PW_FN(hsum)(PW_DOT4(_mm256_abs_epi8(wv), _mm256_sign_epi8(aq, wv)));
}

PW_FUNC inline __attribute__((always_inline)) void PW_FN(rows_q8_0_q4_0)(const uint8_t *w, const uint8_t *a,
                                                                         int64_t astride, int nb, int q4, int n,
                                                                         float *out) {
    const __m256i m4 = _mm256_set1_epi8(15);
#if PW_Q8_BIASED
    const __m256i bias = _mm256_set1_epi8((char) 0x80);
#endif
    const int bytes = q4 ? 18 : 34;
    __m256 acc[4];
    for (int r = 0; r < n; r++) {
        acc[r] = _mm256_setzero_ps();
    }
    int b = 0;
    for (; b + 8 <= nb; b += 8) {
        const uint8_t *wg = w + (int64_t) bytes * b, *ag = a + (int64_t) A32_BYTES * b;
        /* per row: Q4_0 t[r][h] = the hadd of pairs 2h and 2h+1; Q8_0 the same of the even blocks (t)
         * and of the odd ones (t2) */
        __m256i t[4][2], t2[4][2];
        for (int h = 0; h < 2; h++) {
            __m256i v[4][2], v2[4][2];
            for (int p = 0; p < 2; p++) {
                const uint8_t *w0 = wg + 2 * bytes * (2 * h + p) + 2;
                const int64_t a0 = A32_BYTES * 2 * (2 * h + p) + 8;
                if (q4) {
                    __m256i x = PW_FN(pair16)(w0, bytes);
                    __m256i lo = _mm256_and_si256(x, m4), hi = _mm256_and_si256(_mm256_srli_epi16(x, 4), m4);
                    for (int r = 0; r < n; r++) {
                        const uint8_t *ar = ag + r * astride + a0;
                        v[r][p] = PW_DOT8(lo, PW_FN(pair16)(ar, A32_BYTES), hi, PW_FN(pair16)(ar + 16, A32_BYTES));
                    }
                } else {
                    __m256i x0 = _mm256_loadu_si256((const __m256i *) w0);
                    __m256i x1 = _mm256_loadu_si256((const __m256i *) (w0 + bytes));
#if PW_Q8_BIASED
                    /* w + 128 as unsigned bytes: the sums exceed w * a by 128 * the activation sums */
                    __m256i u0 = _mm256_xor_si256(x0, bias), u1 = _mm256_xor_si256(x1, bias);
                    for (int r = 0; r < n; r++) {
                        const uint8_t *ar = ag + r * astride + a0;
                        v[r][p] = PW_DOT4(u0, _mm256_loadu_si256((const __m256i *) ar));
                        v2[r][p] = PW_DOT4(u1, _mm256_loadu_si256((const __m256i *) (ar + A32_BYTES)));
                    }
#else
                    __m256i u0 = _mm256_abs_epi8(x0), u1 = _mm256_abs_epi8(x1);
                    for (int r = 0; r < n; r++) {
                        const uint8_t *ar = ag + r * astride + a0;
                        v[r][p] = PW_DOT4(u0, _mm256_sign_epi8(_mm256_loadu_si256((const __m256i *) ar), x0));
                        v2[r][p] = PW_DOT4(u1, _mm256_sign_epi8(_mm256_loadu_si256((const __m256i *) (ar + A32_BYTES)), x1));
                    }
#endif
                }
            }
            for (int r = 0; r < n; r++) {
                t[r][h] = _mm256_hadd_epi32(v[r][0], v[r][1]);
                if (!q4) {
                    t2[r][h] = _mm256_hadd_epi32(v2[r][0], v2[r][1]);
                }
            }
        }
        __m256 dw = PW_FN(wscales8)(wg, bytes);
        for (int r = 0; r < n; r++) {
            __m256 da;
            __m256i asum;
            PW_FN(aheads8)(ag + r * astride, &da, &asum);
            __m256i s = _mm256_hadd_epi32(t[r][0], t[r][1]);
            if (q4) {
                s = _mm256_sub_epi32(s, _mm256_slli_epi32(asum, 3));
            } else {
                /* even blocks' partial sums in both halves of s, odd ones' in both of s2: halves crossed */
                __m256i s2 = _mm256_hadd_epi32(t2[r][0], t2[r][1]);
                s = _mm256_add_epi32(_mm256_permute2x128_si256(s, s2, 0x20), _mm256_permute2x128_si256(s, s2, 0x31));
#if PW_Q8_BIASED
                s = _mm256_sub_epi32(s, _mm256_slli_epi32(asum, 7));
#endif
            }
            __m256 dd = _mm256_mul_ps(dw, da);
            acc[r] = _mm256_add_ps(acc[r], _mm256_mul_ps(dd, _mm256_cvtepi32_ps(s)));
        }
    }
    for (int r = 0; r < n; r++) {
        float perm[8], lanes[8];
        _mm256_storeu_ps(perm, acc[r]);
        for (int k = 0; k < 8; k++) {
            lanes[k] = perm[PW_LANE(k)];
        }
        const uint8_t *ar = a + r * astride;
        for (int c = b; c < nb; c++) {
            const uint8_t *wb = w + (int64_t) bytes * c, *ab = ar + (int64_t) A32_BYTES * c;
            int32_t s = PW_FN(block_sum)(wb + 2, ab, q4);
            float dd = half_to_float(rd16(wb)) * rdf(ab);
            float t = dd * (float) s;
            lanes[c & 7] = lanes[c & 7] + t;
        }
        out[r] = reduce8(lanes);
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
