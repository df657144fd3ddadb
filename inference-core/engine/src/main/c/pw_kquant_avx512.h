/*
 * The K-quant kernels of pw_kquant.c in 512-bit vectors, for CPUs with AVX-512 VNNI: 64 weights a
 * vector in natural order, met by vpmaddubsw (unsigned weights times signed activations, pairs into
 * int16, no saturation: at most 2 * 63 * 127) and vpdpwssd (the pairs times the sub-block's scale,
 * added into int32). Every per-super-block sum is the same exact integer as in the scalar path, and the
 * float steps after it are kstep's, so the bits are those of every other path.
 */
#define PW_Z static __attribute__((target("avx2,f16c,avx512f,avx512vl,avx512bw,avx512vnni")))

/* One row's exact sums: the super-block's products v (16 lanes) and its min terms m (8 lanes) -> {isum, msum}. */
PW_Z inline void sums1_z(__m512i v, __m256i m, int32_t *isum, int32_t *msum) {
    __m256i f = _mm256_add_epi32(_mm512_castsi512_si256(v), _mm512_extracti64x4_epi64(v, 1));
    __m256i x = _mm256_hadd_epi32(f, m);
    x = _mm256_hadd_epi32(x, x);
    __m128i y = _mm_add_epi32(_mm256_castsi256_si128(x), _mm256_extracti128_si256(x, 1));
    *isum = _mm_cvtsi128_si32(y);
    *msum = _mm_extract_epi32(y, 1);
}

/* Four rows' exact sums at once: lanes 0-3 the isums of rows 0-3, lanes 4-7 their msums. */
PW_Z inline __m256i sums4_z(const __m512i *v, const __m256i *m) {
    __m256i f[4];
    for (int r = 0; r < 4; r++) {
        f[r] = _mm256_add_epi32(_mm512_castsi512_si256(v[r]), _mm512_extracti64x4_epi64(v[r], 1));
    }
    /* hadd pairs within 128-bit halves: after two rounds the low half holds each vector's lanes 0-3
     * summed, the high half lanes 4-7 */
    __m256i fi = _mm256_hadd_epi32(_mm256_hadd_epi32(f[0], f[1]), _mm256_hadd_epi32(f[2], f[3]));
    __m256i fm = _mm256_hadd_epi32(_mm256_hadd_epi32(m[0], m[1]), _mm256_hadd_epi32(m[2], m[3]));
    return _mm256_add_epi32(_mm256_permute2x128_si256(fi, fm, 0x20), _mm256_permute2x128_si256(fi, fm, 0x31));
}

/* kstep's t = (d*da)*isum - (dmin*da)*msum in four lanes: the same operations, lane by lane. */
PW_Z inline __m128 kterm4_z(__m128 d, __m128 dmin, __m128 da, __m128i isum, __m128i msum) {
    __m128 dd = _mm_mul_ps(d, da);
    __m128 dm = _mm_mul_ps(dmin, da);
    __m128 t1 = _mm_mul_ps(dd, _mm_cvtepi32_ps(isum));
    __m128 t2 = _mm_mul_ps(dm, _mm_cvtepi32_ps(msum));
    return _mm_sub_ps(t1, t2);
}

/* acc + t0 + t1 + t2 + t3, in that order (kstep's add, four super-blocks of one row). */
PW_Z inline float kadd4_z(float acc, __m128 t) {
    float l[4];
    _mm_storeu_ps(l, t);
    return (((acc + l[0]) + l[1]) + l[2]) + l[3];
}

/* The activation scales d of four super-blocks, stride bytes apart. */
PW_Z inline __m128 da4_z(const uint8_t *ab, int64_t stride) {
    return _mm_setr_ps(rdf(ab), rdf(ab + stride), rdf(ab + 2 * stride), rdf(ab + 3 * stride));
}

/* pshufb indexes within each 128-bit lane: int16 scale (lane j of the source) in all 8 int16 slots */
#define PW_PAIR(j) (char) (2 * (j) + 1), (char) (2 * (j)) /* high byte first: _mm512_set_epi8 lists from byte 63 down */
#define PW_LANE16(j) PW_PAIR(j), PW_PAIR(j), PW_PAIR(j), PW_PAIR(j), PW_PAIR(j), PW_PAIR(j), PW_PAIR(j), PW_PAIR(j)

/*
 * kscales8 in one vector: the 12 scale bytes at sc (16 bytes read: the quants follow them) -> bytes 0-7
 * the eight 6-bit scales, bytes 8-15 the eight mins.
 */
PW_Z inline __m128i kscales_z(const uint8_t *sc) {
    __m128i x = _mm_loadu_si128((const __m128i *) sc);
    __m128i lo = _mm_and_si128(x, _mm_set1_epi8(63)); /* scales 0-3, mins 0-3 */
    __m128i c = _mm_shuffle_epi8(x, _mm_setr_epi8(8, 9, 10, 11, 8, 9, 10, 11, -1, -1, -1, -1, -1, -1, -1, -1));
    /* bytes 0-3 the low nibbles of bytes 8-11, bytes 4-7 their high nibbles */
    __m128i cn = _mm_blend_epi32(_mm_and_si128(c, _mm_set1_epi8(15)),
                                 _mm_and_si128(_mm_srli_epi16(c, 4), _mm_set1_epi8(15)), 0x2);
    /* the top two bits of bytes 0-7, as bits 4-5 */
    __m128i top = _mm_slli_epi16(_mm_and_si128(_mm_srli_epi16(x, 6), _mm_set1_epi8(3)), 4);
    __m128i hi = _mm_or_si128(cn, top); /* scales 4-7, mins 4-7 */
    return _mm_unpacklo_epi32(lo, hi);
}

/*
 * Q4_K/Q5_K quants of a super-block wb in value order, a group g (64 values, sub-blocks 2g and 2g+1) at
 * a time: its 32 quant bytes broadcast to both halves, the upper half shifted right by 4, so low nibbles
 * then high nibbles. Q5_K's fifth bits come from *qh (q45_high_z), which each group moves on.
 */
PW_Z inline __m512i q45_high_z(const uint8_t *wb, int five) {
    /* qh[l]'s bit 2g is value 64g + l's fifth bit, bit 2g + 1 value 64g + 32 + l's: the upper half
     * starts one bit further on, and each group moves both on by two */
    return five ? _mm512_srlv_epi64(_mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *) (wb + 16))),
                                    _mm512_setr_epi64(0, 0, 0, 0, 1, 1, 1, 1))
                : _mm512_setzero_si512();
}

PW_Z inline __m512i q45_group_z(const uint8_t *wb, int g, int five, __m512i *qh) {
    const uint8_t *qs = wb + (five ? 48 : 16);
    __m512i x = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *) (qs + 32 * g)));
    x = _mm512_and_si512(_mm512_srlv_epi64(x, _mm512_setr_epi64(0, 0, 0, 0, 4, 4, 4, 4)), _mm512_set1_epi8(15));
    if (five) {
        /* each byte's bit 0 to bit 4 (the shift carries the byte below's bits 4-7 into 0-3) */
        x = _mm512_or_si512(x, _mm512_and_si512(_mm512_slli_epi64(*qh, 4), _mm512_set1_epi8(16)));
        *qh = _mm512_srli_epi64(*qh, 2);
    }
    return x;
}

/*
 * Q6_K quants of half h (128 values) of a super-block wb in value order: 64 low-nibble bytes and 32
 * bytes of 2-bit tops. The low nibbles of the 64 bytes are values 128h + 0..63 (*lo), the high nibbles
 * 128h + 64..127 (*hi); the tops of each 32 come from qh shifted by 0, 2 (low) and 4, 6 (high).
 */
PW_Z inline void q6_half_z(const uint8_t *wb, int h, __m512i *lo, __m512i *hi) {
    const __m512i m4 = _mm512_set1_epi8(15), m3 = _mm512_set1_epi8(3);
    const __m512i tlo = _mm512_setr_epi64(0, 0, 0, 0, 2, 2, 2, 2), thi = _mm512_setr_epi64(4, 4, 4, 4, 6, 6, 6, 6);
    __m512i x = _mm512_loadu_si512(wb + 64 * h);
    __m512i hb = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *) (wb + 128 + 32 * h)));
    *lo = _mm512_or_si512(_mm512_and_si512(x, m4), _mm512_slli_epi16(_mm512_and_si512(_mm512_srlv_epi64(hb, tlo), m3), 4));
    *hi = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(x, 4), m4),
                          _mm512_slli_epi16(_mm512_and_si512(_mm512_srlv_epi64(hb, thi), m3), 4));
}

/*
 * One Q4_K (five = 0) or Q5_K (five = 1) super-block wb times n = 1..4 activation super-blocks (astride
 * bytes apart): per row r the products vs[r] (16 lanes, summing to the isum) and the min terms ms[r]
 * (8 lanes, summing to the msum), a group of 64 values (q45_group_z) at a time.
 */
PW_Z inline __attribute__((always_inline)) void sb_q45_z(const uint8_t *wb, const uint8_t *ab, int64_t astride,
                                                         int five, int n, __m512i *vs, __m256i *ms) {
    /* scale j of group g: lanes 0-1 (int16 slots 0-15) take sub-block 2g, lanes 2-3 take 2g + 1 */
    const __m512i pick[4] = {
        _mm512_set_epi8(PW_LANE16(1), PW_LANE16(1), PW_LANE16(0), PW_LANE16(0)),
        _mm512_set_epi8(PW_LANE16(3), PW_LANE16(3), PW_LANE16(2), PW_LANE16(2)),
        _mm512_set_epi8(PW_LANE16(5), PW_LANE16(5), PW_LANE16(4), PW_LANE16(4)),
        _mm512_set_epi8(PW_LANE16(7), PW_LANE16(7), PW_LANE16(6), PW_LANE16(6)),
    };
    __m128i scmin = kscales_z(wb + 4);
    __m512i sc = _mm512_broadcast_i32x4(_mm_cvtepu8_epi16(scmin));
    __m512i qh = q45_high_z(wb, five);
    /* two sums per row (even and odd groups), so that no one chain of adds is the bound */
    __m512i v1[4];
    for (int r = 0; r < n; r++) {
        vs[r] = _mm512_setzero_si512();
        v1[r] = _mm512_setzero_si512();
    }
    for (int g = 0; g < 4; g++) {
        __m512i x = q45_group_z(wb, g, five, &qh);
        __m512i v = _mm512_shuffle_epi8(sc, pick[g]);
        for (int r = 0; r < n; r++) {
            __m512i p = _mm512_maddubs_epi16(x, _mm512_loadu_si512(ab + r * astride + 40 + 64 * g));
            if (g & 1) {
                v1[r] = _mm512_dpwssd_epi32(v1[r], p, v);
            } else {
                vs[r] = _mm512_dpwssd_epi32(vs[r], p, v);
            }
        }
    }
    /* the min term: sum_j min_j * (sums of its two 16s), the mins widened to pairs of int16 */
    __m128i m8 = _mm_srli_si128(scmin, 8);
    __m256i m16 = _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(m8, m8));
    for (int r = 0; r < n; r++) {
        vs[r] = _mm512_add_epi32(vs[r], v1[r]);
        ms[r] = _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *) (ab + r * astride + 8)), m16);
    }
}

/*
 * One Q6_K super-block wb times n activation super-blocks, as sb_q45_z; the -32 offset is in ms (to be
 * taken 32 times). One int8 scale per 16 values, one 128-bit lane.
 */
PW_Z inline __attribute__((always_inline)) void sb_q6_z(const uint8_t *wb, const uint8_t *ab, int64_t astride, int n,
                                                        __m512i *vs, __m256i *ms) {
    const __m512i plo = _mm512_set_epi8(PW_LANE16(3), PW_LANE16(2), PW_LANE16(1), PW_LANE16(0));
    const __m512i phi = _mm512_set_epi8(PW_LANE16(7), PW_LANE16(6), PW_LANE16(5), PW_LANE16(4));
    __m256i sc16 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *) (wb + 192)));
    __m512i v1[4];
    for (int r = 0; r < n; r++) {
        vs[r] = _mm512_setzero_si512();
        v1[r] = _mm512_setzero_si512();
    }
    for (int h = 0; h < 2; h++) {
        __m512i lo, hi;
        q6_half_z(wb, h, &lo, &hi);
        __m512i sch = _mm512_broadcast_i32x4(h ? _mm256_extracti128_si256(sc16, 1) : _mm256_castsi256_si128(sc16));
        __m512i slo = _mm512_shuffle_epi8(sch, plo), shi = _mm512_shuffle_epi8(sch, phi);
        for (int r = 0; r < n; r++) {
            const uint8_t *aq = ab + r * astride + 40 + 128 * h;
            vs[r] = _mm512_dpwssd_epi32(vs[r], _mm512_maddubs_epi16(lo, _mm512_loadu_si512(aq)), slo);
            v1[r] = _mm512_dpwssd_epi32(v1[r], _mm512_maddubs_epi16(hi, _mm512_loadu_si512(aq + 64)), shi);
        }
    }
    for (int r = 0; r < n; r++) {
        vs[r] = _mm512_add_epi32(vs[r], v1[r]);
        ms[r] = _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *) (ab + r * astride + 8)), sc16);
    }
}

/*
 * The fixed float tail per type from the exact sums (lanes 0-3 isums, 4-7 msums of four super-blocks
 * or four rows): Q4_K/Q5_K as they are with dmin; Q6_K isum - 32 * msum and no min term (exact in
 * int32: |isum| <= 256 * 63 * 127 * 128, |32 * msum| <= 32 * 16 * 128 * 16 * 127).
 */
PW_Z inline __m128 kterms_z(int q6, __m256i s, __m128 d, __m128 dmin, __m128 da) {
    __m128i isum = _mm256_castsi256_si128(s), msum = _mm256_extracti128_si256(s, 1);
    if (q6) {
        return kterm4_z(d, _mm_setzero_ps(), da, _mm_sub_epi32(isum, _mm_slli_epi32(msum, 5)), _mm_setzero_si128());
    }
    return kterm4_z(d, dmin, da, isum, msum);
}

/* A K-quant super-block's d and dmin (Q6_K: d only, dmin 0), widened by F16C (exact, as half_to_float). */
PW_Z inline void kd_z(const uint8_t *wb, int q6, float *d, float *dmin) {
    if (q6) {
        *d = _cvtsh_ss(rd16(wb + 208));
        *dmin = 0.0f;
    } else {
        __m128 dd = _mm_cvtph_ps(_mm_cvtsi32_si128(rdi32(wb)));
        *d = _mm_cvtss_f32(dd);
        *dmin = _mm_cvtss_f32(_mm_movehdup_ps(dd));
    }
}

/*
 * A K-quant row times n activation rows: type 0 Q4_K, 1 Q5_K, 2 Q6_K. Four rows end each super-block
 * together (their sums reduced in one vector, the float steps in four lanes); one row ends four
 * super-blocks together and adds their terms in order. Both give kstep's bits.
 */
PW_Z inline __attribute__((always_inline)) void rows_k_z(const uint8_t *w, const uint8_t *a, int64_t astride, int nb,
                                                         int kind, int n, float *out) {
    const int bytes = kind == 0 ? 144 : kind == 1 ? 176 : 210, q6 = kind == 2;
    __m512i vs[4];
    __m256i ms[4];
    float d, dmin;
    if (n == 4) {
        __m128 acc = _mm_setzero_ps();
        for (int b = 0; b < nb; b++) {
            const uint8_t *wb = w + (int64_t) bytes * b, *ab = a + (int64_t) A256_BYTES * b;
            if (q6) {
                sb_q6_z(wb, ab, astride, 4, vs, ms);
            } else {
                sb_q45_z(wb, ab, astride, kind, 4, vs, ms);
            }
            kd_z(wb, q6, &d, &dmin);
            acc = _mm_add_ps(acc, kterms_z(q6, sums4_z(vs, ms), _mm_set1_ps(d), _mm_set1_ps(dmin),
                                           da4_z(ab, astride)));
        }
        _mm_storeu_ps(out, acc);
        return;
    }
    for (int r = 0; r < n; r++) {
        const uint8_t *ar = a + r * astride;
        float acc = 0.0f;
        int b = 0;
        for (; b + 4 <= nb; b += 4) {
            float dq[4], mq[4];
#pragma GCC unroll 4
            for (int k = 0; k < 4; k++) {
                const uint8_t *wb = w + (int64_t) bytes * (b + k), *ab = ar + (int64_t) A256_BYTES * (b + k);
                if (q6) {
                    sb_q6_z(wb, ab, 0, 1, vs + k, ms + k);
                } else {
                    sb_q45_z(wb, ab, 0, kind, 1, vs + k, ms + k);
                }
                kd_z(wb, q6, dq + k, mq + k);
            }
            acc = kadd4_z(acc, kterms_z(q6, sums4_z(vs, ms), _mm_loadu_ps(dq), _mm_loadu_ps(mq),
                                        da4_z(ar + (int64_t) A256_BYTES * b, A256_BYTES)));
        }
        for (; b < nb; b++) {
            const uint8_t *wb = w + (int64_t) bytes * b, *ab = ar + (int64_t) A256_BYTES * b;
            if (q6) {
                sb_q6_z(wb, ab, 0, 1, vs, ms);
            } else {
                sb_q45_z(wb, ab, 0, kind, 1, vs, ms);
            }
            kd_z(wb, q6, &d, &dmin);
            int32_t isum, msum;
            sums1_z(vs[0], ms[0], &isum, &msum);
            acc = q6 ? kstep(acc, d, 0.0f, rdf(ab), (int64_t) isum - 32 * (int64_t) msum, 0)
                     : kstep(acc, d, dmin, rdf(ab), isum, msum);
        }
        out[r] = acc;
    }
}

PW_Z float dot_q4_k_z(const uint8_t *w, const uint8_t *a, int nb) {
    float o;
    rows_k_z(w, a, 0, nb, 0, 1, &o);
    return o;
}

PW_Z float dot_q5_k_z(const uint8_t *w, const uint8_t *a, int nb) {
    float o;
    rows_k_z(w, a, 0, nb, 1, 1, &o);
    return o;
}

PW_Z float dot_q6_k_z(const uint8_t *w, const uint8_t *a, int nb) {
    float o;
    rows_k_z(w, a, 0, nb, 2, 1, &o);
    return o;
}

PW_Z void dot4_q4_k_z(const uint8_t *w, const uint8_t *a, int64_t astride, int nb, float *out) {
    rows_k_z(w, a, astride, nb, 0, 4, out);
}

PW_Z void dot4_q5_k_z(const uint8_t *w, const uint8_t *a, int64_t astride, int nb, float *out) {
    rows_k_z(w, a, astride, nb, 1, 4, out);
}

PW_Z void dot4_q6_k_z(const uint8_t *w, const uint8_t *a, int64_t astride, int nb, float *out) {
    rows_k_z(w, a, astride, nb, 2, 4, out);
}


/*
 * Q8_0 and Q4_0 for many activation rows: sixteen weight rows are first copied into a scratch tile in
 * which a block's quants are interleaved four bytes a row (a 512-bit vector holds the same four
 * positions of all sixteen rows), so each lane of vpdpbusd, fed the same four activations, builds one
 * row's exact block sum; the block's float step is then one vector op per step for sixteen outputs, in
 * the scalar path's order (dd = dw * da, t = dd * s, block b into accumulator b % 8, reduce8 at the end).
 * The tile: per block 16 float scales (fp16 widened, exact), then the quants (Q8_0 + 128 as unsigned
 * bytes, 8 vectors; Q4_0 4 vectors of nibble pairs).
 */
#define PW_TILE_ROWS 16

static int64_t tile_block_bytes(int q4) { return 64 + (q4 ? 256 : 512); }

PW_Z void tile_fill_z(const uint8_t *w, int64_t rowBytes, int nb, int q4, uint8_t *tile) {
    const int bytes = q4 ? 18 : 34, qbytes = q4 ? 16 : 32;
    int64_t tb = tile_block_bytes(q4);
    for (int b = 0; b < nb; b++) {
        uint8_t *t = tile + tb * b;
        float *sc = (float *) t;
        for (int r = 0; r < PW_TILE_ROWS; r++) {
            const uint8_t *wb = w + r * rowBytes + (int64_t) bytes * b;
            sc[r] = half_to_float(rd16(wb));
            for (int s = 0; s < qbytes / 4; s++) {
                uint32_t v;
                memcpy(&v, wb + 2 + 4 * s, 4);
                if (!q4) {
                    v ^= 0x80808080u;
                }
                memcpy(t + 64 + 64 * s + 4 * r, &v, 4);
            }
        }
    }
}

/* Rows of the tile times n = 1 or 2 activation rows from b (A32), outputs out[(b + k) * outStride + r0 + lane]. */
PW_Z inline __attribute__((always_inline)) void tile_n_z(const uint8_t *tile, int nb, int q4, const uint8_t *act,
                                                         int64_t actRowBytes, int32_t b, int n, float *out,
                                                         int64_t outStride, int32_t r0) {
    const __m512i m4 = _mm512_set1_epi8(15);
    int64_t tb = tile_block_bytes(q4);
    const int shift = q4 ? 3 : 7;
    __m512 acc[2][8];
    for (int k = 0; k < n; k++) {
        for (int i = 0; i < 8; i++) {
            acc[k][i] = _mm512_setzero_ps();
        }
    }
    for (int c = 0; c < nb; c++) {
        const uint8_t *t = tile + tb * c, *row = act + b * actRowBytes;
        const uint8_t *ab = A32_HEAD(row, c), *aq = A32_Q(row, nb, c);
        /* the offset of the unsigned weights (Q4_0: nibble = w + 8, Q8_0: w + 128) times the block's sum */
        __m512i s[2];
        for (int k = 0; k < n; k++) {
            s[k] = _mm512_set1_epi32(-(rdi32(ab + k * actRowBytes + 4) << shift));
        }
        if (q4) {
            for (int j = 0; j < 4; j++) {
                __m512i x = _mm512_loadu_si512(t + 64 + 64 * j);
                __m512i lo = _mm512_and_si512(x, m4), hi = _mm512_and_si512(_mm512_srli_epi16(x, 4), m4);
                for (int k = 0; k < n; k++) {
                    const uint8_t *q = aq + k * actRowBytes;
                    s[k] = _mm512_dpbusd_epi32(s[k], lo, _mm512_set1_epi32(rdi32(q + 4 * j)));
                    s[k] = _mm512_dpbusd_epi32(s[k], hi, _mm512_set1_epi32(rdi32(q + 16 + 4 * j)));
                }
            }
        } else {
            for (int j = 0; j < 8; j++) {
                __m512i x = _mm512_loadu_si512(t + 64 + 64 * j);
                for (int k = 0; k < n; k++) {
                    s[k] = _mm512_dpbusd_epi32(s[k], x, _mm512_set1_epi32(rdi32(aq + k * actRowBytes + 4 * j)));
                }
            }
        }
        __m512 dw = _mm512_loadu_ps((const float *) t);
        for (int k = 0; k < n; k++) {
            __m512 dd = _mm512_mul_ps(dw, _mm512_set1_ps(rdf(ab + k * actRowBytes)));
            acc[k][c & 7] = _mm512_add_ps(acc[k][c & 7], _mm512_mul_ps(dd, _mm512_cvtepi32_ps(s[k])));
        }
    }
    for (int k = 0; k < n; k++) {
        __m512 *a8 = acc[k];
        __m512 o = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a8[0], a8[4]), _mm512_add_ps(a8[2], a8[6])),
                                 _mm512_add_ps(_mm512_add_ps(a8[1], a8[5]), _mm512_add_ps(a8[3], a8[7])));
        _mm512_storeu_ps(out + (b + k) * outStride + r0, o);
    }
}

/* Rows of the tile times activation rows [b0, b1), two at a time. */
PW_Z void tile_rows_z(const uint8_t *tile, int nb, int q4, const uint8_t *act, int64_t actRowBytes, int32_t b0,
                      int32_t b1, float *out, int64_t outStride, int32_t r0) {
    int32_t b = b0;
    for (; b + 2 <= b1; b += 2) {
        tile_n_z(tile, nb, q4, act, actRowBytes, b, 2, out, outStride, r0);
    }
    for (; b < b1; b++) {
        tile_n_z(tile, nb, q4, act, actRowBytes, b, 1, out, outStride, r0);
    }
}

/*
 * The K-quants for many activation rows, as the tiles above: sixteen weight rows unpacked into a tile
 * where each step of four values holds those four of all sixteen rows, so a vpdpbusd lane builds one
 * row's exact sub-block sum; then per sub-block one 32-bit multiply by the sixteen rows' scales, the
 * min (or Q6_K offset) terms by vpdpwssd against the activation sums of each 16, and kstep's float
 * operations for sixteen outputs. The sums are the scalar path's integers, the float steps its
 * operations, so the outputs are its bits.
 * Per super-block: d[16], dmin[16] (floats), the scales (one vector of 16 int32 per sub-block: 8 of 32
 * values, Q6_K 16 of 16), 8 vectors of int16 pairs for the min terms (Q4_K/Q5_K: min_j twice, meeting
 * the sums of sub-block j's two 16s; Q6_K: sc_2i, sc_2i+1), then 64 vectors of quants.
 */
static int ktile_subs(int kind) { return kind == 2 ? 16 : 8; }

static int64_t ktile_block_bytes(int kind) { return 128 + 64 * ktile_subs(kind) + 64 * 8 + 64 * 64; }

/* One K-quant super-block's 256 values (unsigned: Q4_K 0-15, Q5_K 0-31, Q6_K 0-63) in value order. */
PW_Z inline void kvalues_z(const uint8_t *wb, int kind, uint8_t *v) {
    if (kind == 2) {
        for (int h = 0; h < 2; h++) {
            __m512i lo, hi;
            q6_half_z(wb, h, &lo, &hi);
            _mm512_storeu_si512(v + 128 * h, lo);
            _mm512_storeu_si512(v + 128 * h + 64, hi);
        }
        return;
    }
    __m512i qh = q45_high_z(wb, kind);
    for (int g = 0; g < 4; g++) {
        _mm512_storeu_si512(v + 64 * g, q45_group_z(wb, g, kind, &qh));
    }
}

PW_Z void ktile_fill_z(const uint8_t *w, int64_t rowBytes, int nb, int kind, uint8_t *tile) {
    const int bytes = kind == 0 ? 144 : kind == 1 ? 176 : 210, subs = ktile_subs(kind);
    int64_t tb = ktile_block_bytes(kind);
    uint8_t v[256];
    for (int c = 0; c < nb; c++) {
        uint8_t *t = tile + tb * c;
        float *d = (float *) t, *dmin = (float *) (t + 64);
        int32_t *sc = (int32_t *) (t + 128), *mp = (int32_t *) (t + 128 + 64 * subs);
        uint8_t *q = t + 128 + 64 * subs + 64 * 8;
        for (int r = 0; r < PW_TILE_ROWS; r++) {
            const uint8_t *wb = w + r * rowBytes + (int64_t) bytes * c;
            if (kind == 2) {
                const int8_t *s6 = (const int8_t *) (wb + 192);
                d[r] = half_to_float(rd16(wb + 208));
                dmin[r] = 0.0f;
                for (int j = 0; j < 16; j++) {
                    sc[16 * j + r] = s6[j];
                }
                for (int i = 0; i < 8; i++) {
                    mp[16 * i + r] = (int32_t) ((uint32_t) (uint16_t) s6[2 * i] | (uint32_t) (uint16_t) s6[2 * i + 1] << 16);
                }
            } else {
                d[r] = half_to_float(rd16(wb));
                dmin[r] = half_to_float(rd16(wb + 2));
                uint64_t scales, mins;
                kscales8(wb + 4, &scales, &mins);
                for (int j = 0; j < 8; j++) {
                    uint32_t m = (uint32_t) (mins >> 8 * j) & 0xff;
                    sc[16 * j + r] = (int32_t) ((scales >> 8 * j) & 0xff);
                    mp[16 * j + r] = (int32_t) (m | m << 16);
                }
            }
            kvalues_z(wb, kind, v);
            for (int st = 0; st < 64; st++) {
                memcpy(q + 64 * st + 4 * r, v + 4 * st, 4);
            }
        }
    }
}

/* Rows of the K-quant tile times n = 1..4 activation rows from b (A256), outputs out[(b + k) * outStride + r0 + lane]. */
PW_Z inline __attribute__((always_inline)) void ktile_n_z(const uint8_t *tile, int nb, int kind, const uint8_t *act,
                                                          int64_t actRowBytes, int32_t b, int n, float *out,
                                                          int64_t outStride, int32_t r0) {
    const int subs = ktile_subs(kind), steps = 64 / subs;
    int64_t tb = ktile_block_bytes(kind);
    __m512 acc[4];
    for (int k = 0; k < n; k++) {
        acc[k] = _mm512_setzero_ps();
    }
    for (int c = 0; c < nb; c++) {
        const uint8_t *t = tile + tb * c, *ab = act + b * actRowBytes + (int64_t) A256_BYTES * c;
        const uint8_t *sc = t + 128, *mp = sc + 64 * subs, *q = mp + 64 * 8;
        __m512i isum[4], msum[4];
        for (int k = 0; k < n; k++) {
            isum[k] = _mm512_setzero_si512();
            msum[k] = _mm512_setzero_si512();
        }
        for (int j = 0; j < subs; j++) {
            /* each quant vector meets the same four activations of every row */
            __m512i s[4];
            for (int k = 0; k < n; k++) {
                s[k] = _mm512_setzero_si512();
            }
            for (int st = 0; st < steps; st++) {
                __m512i x = _mm512_loadu_si512(q + 64 * (j * steps + st));
                for (int k = 0; k < n; k++) {
                    s[k] = _mm512_dpbusd_epi32(s[k], x, _mm512_set1_epi32(rdi32(ab + k * actRowBytes + 40 + 4 * (j * steps + st))));
                }
            }
            __m512i scj = _mm512_loadu_si512(sc + 64 * j);
            for (int k = 0; k < n; k++) {
                isum[k] = _mm512_add_epi32(isum[k], _mm512_mullo_epi32(s[k], scj));
            }
        }
        for (int i = 0; i < 8; i++) {
            __m512i m = _mm512_loadu_si512(mp + 64 * i);
            for (int k = 0; k < n; k++) {
                msum[k] = _mm512_dpwssd_epi32(msum[k], m, _mm512_set1_epi32(rdi32(ab + k * actRowBytes + 8 + 4 * i)));
            }
        }
        __m512 d = _mm512_loadu_ps((const float *) t), dmin = _mm512_loadu_ps((const float *) (t + 64));
        for (int k = 0; k < n; k++) {
            __m512i is = isum[k], ms = msum[k];
            if (kind == 2) {
                is = _mm512_sub_epi32(is, _mm512_slli_epi32(ms, 5));
                ms = _mm512_setzero_si512();
            }
            __m512 da = _mm512_set1_ps(rdf(ab + k * actRowBytes));
            __m512 dd = _mm512_mul_ps(d, da);
            __m512 dm = _mm512_mul_ps(dmin, da);
            __m512 t1 = _mm512_mul_ps(dd, _mm512_cvtepi32_ps(is));
            __m512 t2 = _mm512_mul_ps(dm, _mm512_cvtepi32_ps(ms));
            acc[k] = _mm512_add_ps(acc[k], _mm512_sub_ps(t1, t2));
        }
    }
    for (int k = 0; k < n; k++) {
        _mm512_storeu_ps(out + (b + k) * outStride + r0, acc[k]);
    }
}

/* Rows of the K-quant tile times activation rows [b0, b1), four at a time. */
PW_Z void ktile_rows_z(const uint8_t *tile, int nb, int kind, const uint8_t *act, int64_t actRowBytes, int32_t b0,
                       int32_t b1, float *out, int64_t outStride, int32_t r0) {
    int32_t b = b0;
    for (; b + 4 <= b1; b += 4) {
        ktile_n_z(tile, nb, kind, act, actRowBytes, b, 4, out, outStride, r0);
    }
    for (; b < b1; b++) {
        ktile_n_z(tile, nb, kind, act, actRowBytes, b, 1, out, outStride, r0);
    }
}

/*
 * Q8_0 and Q4_0, one activation row (decode): two blocks a 512-bit vector (the activation quants of
 * blocks b and b + 1 lie side by side), eight blocks' exact sums gathered by unpacks and adds into one
 * 256-bit vector in PW_LANE order; from there on the float steps are those of the 256-bit kernels.
 */
PW_Z inline __attribute__((always_inline)) float row_q32_z(const uint8_t *w, const uint8_t *a, int nb, int q4) {
    const int bytes = q4 ? 18 : 34;
    const __m512i m4 = _mm512_set1_epi8(15), nib = _mm512_setr_epi64(0, 0, 4, 4, 0, 0, 4, 4);
    const uint8_t *aq = A32_Q(a, nb, 0);
    __m256 acc = _mm256_setzero_ps();
    int b = 0;
    for (; b + 8 <= nb; b += 8) {
        const uint8_t *wg = w + (int64_t) bytes * b;
        __m512i p[4];
        for (int i = 0; i < 4; i++) {
            const uint8_t *q0 = wg + bytes * (2 * i) + 2, *q1 = q0 + bytes;
            __m512i u;
            if (q4) {
                /* each block's 16 bytes in both halves of its 256 bits, the upper shifted: values 0-31 */
                u = _mm512_inserti64x4(
                        _mm512_castsi256_si512(_mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *) q0))),
                        _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *) q1)), 1);
                u = _mm512_and_si512(_mm512_srlv_epi64(u, nib), m4);
            } else {
                u = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *) q0)),
                                       _mm256_loadu_si256((const __m256i *) q1), 1);
                u = _mm512_xor_si512(u, _mm512_set1_epi8((char) 0x80));
            }
            p[i] = _mm512_dpbusd_epi32(_mm512_setzero_si512(), u, _mm512_loadu_si512(aq + 32 * (b + 2 * i)));
        }
        /* 128-bit lane c of p[i] is a quarter of block 2i + c / 2: pairs of lanes summed across the four
         * vectors leave lane c holding blocks 0, 2, 4, 6 (c = 0, 1) or 1, 3, 5, 7 (c = 2, 3) */
        __m512i t0 = _mm512_add_epi32(_mm512_unpacklo_epi32(p[0], p[1]), _mm512_unpackhi_epi32(p[0], p[1]));
        __m512i t1 = _mm512_add_epi32(_mm512_unpacklo_epi32(p[2], p[3]), _mm512_unpackhi_epi32(p[2], p[3]));
        __m512i u = _mm512_add_epi32(_mm512_unpacklo_epi64(t0, t1), _mm512_unpackhi_epi64(t0, t1));
        u = _mm512_add_epi32(u, _mm512_shuffle_i64x2(u, u, _MM_SHUFFLE(2, 3, 0, 1)));
        __m256i s = _mm512_castsi512_si256(_mm512_shuffle_i64x2(u, u, _MM_SHUFFLE(0, 0, 2, 0)));
        __m256 da;
        __m256i asum;
        aheads8_avx512vnni(A32_HEAD(a, b), &da, &asum);
        s = _mm256_sub_epi32(s, _mm256_slli_epi32(asum, q4 ? 3 : 7));
        __m256 dd = _mm256_mul_ps(wscales8_avx512vnni(wg, bytes), da);
        acc = _mm256_add_ps(acc, _mm256_mul_ps(dd, _mm256_cvtepi32_ps(s)));
    }
    float lanes[8];
    _mm256_storeu_ps(lanes, acc);
    for (int c = b; c < nb; c++) {
        const uint8_t *wb = w + (int64_t) bytes * c, *ab = A32_HEAD(a, c);
        int32_t s = block_sum_avx512vnni(wb + 2, A32_Q(a, nb, c), ab, q4);
        float dd = half_to_float(rd16(wb)) * rdf(ab);
        float t = dd * (float) s;
        lanes[PW_LANE(c & 7)] = lanes[PW_LANE(c & 7)] + t;
    }
    return PW_REDUCE8(lanes, PW_LANE);
}

PW_Z float dot_q8_0_z(const uint8_t *w, const uint8_t *a, int nb) { return row_q32_z(w, a, nb, 0); }

PW_Z float dot_q4_0_z(const uint8_t *w, const uint8_t *a, int nb) { return row_q32_z(w, a, nb, 1); }

#undef PW_LANE16
#undef PW_PAIR
#undef PW_Z
