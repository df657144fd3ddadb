// Paged KV: appending a step's K/V rows into the pages of each sequence, and attention that reads
// K/V through the page table. Both verify, in the kernel, every page they touch against its owner tag
// in device memory (request id, epoch) and, for reads of earlier positions, the written-slot count;
// a page that does not match is never used: the sequence's flag is set and its output zeroed.
//
// Page layout (as KvLayout on the host): [layer][K|V][slot][kvDim] floats, one page contiguous.
#include "common.cuh"

__device__ __forceinline__ size_t pw_row(int page, size_t pageFloats, int layer, int kvSel, int slot,
                                         int pageTokens, int kvDim) {
    return (size_t) page * pageFloats + ((size_t) (layer * 2 + kvSel) * pageTokens + slot) * kvDim;
}

// Checks the first npages pages of a sequence's table before attention reads them: each inside the pool
// and, with checks on, owned by the sequence in its table's epoch with the slots before startPos written.
// A failing page flags the sequence; every thread of the block gets whether all passed (bad: a shared int).
__device__ __forceinline__ bool pw_reads_allowed(const PageTag* tags, int pages, const SeqDesc& sd, int s,
                                                 const TableEntry* table, int npages, int pageTokens, int check,
                                                 int* flags, int* bad) {
    if (threadIdx.x == 0) {
        *bad = 0;
    }
    __syncthreads();
    for (int i = threadIdx.x; i < npages; i += blockDim.x) {
        int code;
        int page = -1;
        if (i >= sd.tablePages) {
            code = PW_PAGE_OUT_OF_RANGE;
        } else {
            TableEntry e = table[sd.tableOffset + i];
            page = e.page;
            int need = min(pageTokens, max(0, sd.startPos - i * pageTokens));
            code = (e.page < 0 || e.page >= pages) ? PW_PAGE_OUT_OF_RANGE
                 : (check ? pw_check_page(tags, pages, sd, e, need) : PW_OK);
        }
        if (code != PW_OK) {
            pw_flag(flags, s, code, page);
            atomicOr(bad, 1);
        }
    }
    __syncthreads();
    return *bad == 0;
}

// One block per token row: writes its K and V rows of `layer` into slot pos % pageTokens of its page,
// and the row's request id into that slot of the writer shadow (one long long per page slot, read by no
// check: it records where the bytes really went). With cosT non-null (fused RoPE) it rotates K on the way
// (pw_rope's operations on the same pairs; neox as there), so pw_rope need not run over K.
extern "C" __global__ void pw_kv_append(float* kv, const PageTag* tags, int pages, const SeqDesc* seqs,
                                        const TableEntry* table, const int* rowSeq, const int* rowPos,
                                        const float* k, const float* v, int layer, int nLayers, int kvDim,
                                        int pageTokens, int check, int* flags, long long* writers,
                                        const float* cosT, const float* sinT, int headSize, int neox) {
    int r = blockIdx.x;
    int s = rowSeq[r];
    SeqDesc sd = seqs[s];
    int pos = rowPos[r];
    int pi = pos / pageTokens;
    if (pi >= sd.tablePages) {
        if (threadIdx.x == 0) {
            pw_flag(flags, s, PW_PAGE_OUT_OF_RANGE, -1);
        }
        return;
    }
    TableEntry e = sd.tableOffset >= 0 ? table[sd.tableOffset + pi] : TableEntry{-1, 0, 0};
    // a page number outside the pool is refused even with checks off: it would address foreign memory
    int code = (e.page < 0 || e.page >= pages) ? PW_PAGE_OUT_OF_RANGE
             : (check ? pw_check_page(tags, pages, sd, e, 0) : PW_OK);
    if (code != PW_OK) {
        if (threadIdx.x == 0) {
            pw_flag(flags, s, code, e.page);
        }
        return;
    }
    size_t pageFloats = (size_t) nLayers * 2 * pageTokens * kvDim;
    int slot = pos % pageTokens;
    float* kd = kv + pw_row(e.page, pageFloats, layer, 0, slot, pageTokens, kvDim);
    float* vd = kv + pw_row(e.page, pageFloats, layer, 1, slot, pageTokens, kvDim);
    const float* ks = k + (size_t) r * kvDim;
    const float* vs = v + (size_t) r * kvDim;
    if (cosT) {
        for (int j = threadIdx.x; j < kvDim / 2; j += blockDim.x) {
            int ia;
            int ib;
            pw_rope_copy(ks, kd, j, headSize, neox, cosT, sinT, pos, &ia, &ib);
            vd[ia] = vs[ia];
            vd[ib] = vs[ib];
        }
    } else {
        for (int i = threadIdx.x; i < kvDim; i += blockDim.x) {
            kd[i] = ks[i];
            vd[i] = vs[i];
        }
    }
    if (threadIdx.x == 0) {
        writers[(size_t) e.page * pageTokens + slot] = sd.request;
    }
}

// One block per (token row, query head): attends over positions 0..pos of the row's own sequence.
// q and out rows are qDim = nHeads * headSize wide. With cosT non-null (fused RoPE) the head's Q is
// rotated as it is loaded into shared memory (pw_rope's operations on the same pairs).
// Dynamic shared memory: (maxPositions + headSize) floats. Fixed order per sequence: scores by position,
// a fixed reduction tree for max and sum, and the V sum over positions 0..pos in order, as the CPU does.
extern "C" __global__ void pw_attention(float* out, const float* q, const float* kv, const PageTag* tags, int pages,
                                        const SeqDesc* seqs, const TableEntry* table, const int* rowSeq,
                                        const int* rowPos, int layer, int nLayers, int qDim, int kvDim,
                                        int headSize, int kvMul, int pageTokens, int check, int* flags,
                                        const float* cosT, const float* sinT, int neox) {
    extern __shared__ float smem[];
    __shared__ float scratch[32];
    __shared__ int bad;
    int r = blockIdx.x;
    int head = blockIdx.y;
    int s = rowSeq[r];
    SeqDesc sd = seqs[s];
    int pos = rowPos[r];
    int n = pos + 1;
    int npages = (n + pageTokens - 1) / pageTokens;
    float* o = out + (size_t) r * qDim + (size_t) head * headSize;
    if (!pw_reads_allowed(tags, pages, sd, s, table, npages, pageTokens, check, flags, &bad)) {
        for (int d = threadIdx.x; d < headSize; d += blockDim.x) {
            o[d] = 0.0f;
        }
        return;
    }
    float* scores = smem;
    float* qs = smem + n;
    const float* qr = q + (size_t) r * qDim + (size_t) head * headSize;
    if (cosT) {
        for (int j = threadIdx.x; j < headSize / 2; j += blockDim.x) {
            int ia;
            int ib;
            pw_rope_copy(qr, qs, j, headSize, neox, cosT, sinT, pos, &ia, &ib);
        }
    } else {
        for (int d = threadIdx.x; d < headSize; d += blockDim.x) {
            qs[d] = qr[d];
        }
    }
    __syncthreads();
    size_t pageFloats = (size_t) nLayers * 2 * pageTokens * kvDim;
    size_t headOff = (size_t) (head / kvMul) * headSize;
    float scale = (float) (1.0 / sqrt((double) headSize));
    const TableEntry* t = table + sd.tableOffset;
    float m = -INFINITY;
    for (int p = threadIdx.x; p < n; p += blockDim.x) {
        const float* kr = kv + pw_row(t[p / pageTokens].page, pageFloats, layer, 0, p % pageTokens, pageTokens, kvDim)
                + headOff;
        float dot = 0.0f;
        if ((headSize & 3) == 0) {
            // the same chain in the same order, the row read 16 bytes at a time with several loads in
            // flight: one scalar load per step left each thread waiting out the latency headSize times
            const float4* k4 = reinterpret_cast<const float4*>(kr);
#pragma unroll 8
            for (int d4 = 0; d4 < (headSize >> 2); d4++) {
                float4 kk = k4[d4];
                dot = fmaf(qs[4 * d4], kk.x, dot);
                dot = fmaf(qs[4 * d4 + 1], kk.y, dot);
                dot = fmaf(qs[4 * d4 + 2], kk.z, dot);
                dot = fmaf(qs[4 * d4 + 3], kk.w, dot);
            }
        } else {
            for (int d = 0; d < headSize; d++) {
                dot = fmaf(qs[d], kr[d], dot);
            }
        }
        float sc = dot * scale;
        scores[p] = sc;
        m = fmaxf(m, sc);
    }
    m = pw_block_max(m, scratch);
    float sum = 0.0f;
    for (int p = threadIdx.x; p < n; p += blockDim.x) {
        float e = expf(scores[p] - m);
        scores[p] = e;
        sum += e;
    }
    sum = pw_block_sum(sum, scratch);
    float inv = 1.0f / sum;
    for (int p = threadIdx.x; p < n; p += blockDim.x) {
        scores[p] *= inv;
    }
    __syncthreads();
    for (int d = threadIdx.x; d < headSize; d += blockDim.x) {
        float acc = 0.0f;
#pragma unroll 8
        for (int p = 0; p < n; p++) {
            const float* vr = kv + pw_row(t[p / pageTokens].page, pageFloats, layer, 1, p % pageTokens, pageTokens, kvDim)
                    + headOff;
            acc = fmaf(scores[p], vr[d], acc);
        }
        o[d] = acc;
    }
}

// Prefill attention that reads each K and V row once for several query rows. A block takes up to
// groupRows consecutive token rows (rows of one sequence are consecutive in a step) for one query head,
// in runs of one sequence, and computes for each row exactly pw_attention's operations in pw_attention's
// order: the same position-to-thread assignment, the same dot-product chain per position, the same
// reduction trees for max and sum, the V sum over positions 0..pos in order. Only the loads are shared:
// a thread loads a K row once and extends every row's chain with it, and the V sum loads each V value
// once for every row. So each row's output is bit-identical to pw_attention's, whatever the grouping,
// and a prefill step and a decode step of the same token agree bit for bit.
// Dynamic shared memory: groupRows * (positions + headSize) floats (scores, then the rows' Q);
// positions >= every row's pos + 1.
#define PW_ATT_ROWS_MAX 8
extern "C" __global__ void pw_attention_rows(float* out, const float* q, const float* kv, const PageTag* tags, int pages,
                                             const SeqDesc* seqs, const TableEntry* table, const int* rowSeq,
                                             const int* rowPos, int rows, int groupRows, int positions, int layer,
                                             int nLayers, int qDim, int kvDim, int headSize, int kvMul, int pageTokens,
                                             int check, int* flags, const float* cosT, const float* sinT, int neox) {
    extern __shared__ float smem[];
    __shared__ float scratch[32];
    __shared__ int bad;
    int head = blockIdx.y;
    int first = blockIdx.x * groupRows;
    int last = min(rows, first + groupRows);
    float* scoresAll = smem;
    float* qsAll = smem + (size_t) groupRows * positions;
    size_t pageFloats = (size_t) nLayers * 2 * pageTokens * kvDim;
    size_t headOff = (size_t) (head / kvMul) * headSize;
    float scale = (float) (1.0 / sqrt((double) headSize));
    for (int r0 = first; r0 < last;) {
        int s = rowSeq[r0];
        int len = 1;
        while (r0 + len < last && len < PW_ATT_ROWS_MAX && rowSeq[r0 + len] == s) {
            len++;
        }
        SeqDesc sd = seqs[s];
        int n[PW_ATT_ROWS_MAX];
        int nmax = 0;
#pragma unroll
        for (int j = 0; j < PW_ATT_ROWS_MAX; j++) {
            n[j] = j < len ? rowPos[r0 + j] + 1 : 0;
            nmax = max(nmax, n[j]);
        }
        // the pages of every row's reads (the longest row's), checked as pw_attention checks them
        int npages = (nmax + pageTokens - 1) / pageTokens;
        if (!pw_reads_allowed(tags, pages, sd, s, table, npages, pageTokens, check, flags, &bad)) {
            for (int j = 0; j < len; j++) {
                float* o = out + (size_t) (r0 + j) * qDim + (size_t) head * headSize;
                for (int d = threadIdx.x; d < headSize; d += blockDim.x) {
                    o[d] = 0.0f;
                }
            }
            r0 += len;
            __syncthreads();
            continue;
        }
        for (int j = 0; j < len; j++) {
            const float* qr = q + (size_t) (r0 + j) * qDim + (size_t) head * headSize;
            float* qs = qsAll + (size_t) j * headSize;
            if (cosT) {
                for (int i = threadIdx.x; i < headSize / 2; i += blockDim.x) {
                    int ia;
                    int ib;
                    pw_rope_copy(qr, qs, i, headSize, neox, cosT, sinT, rowPos[r0 + j], &ia, &ib);
                }
            } else {
                for (int d = threadIdx.x; d < headSize; d += blockDim.x) {
                    qs[d] = qr[d];
                }
            }
        }
        __syncthreads();
        const TableEntry* t = table + sd.tableOffset;
        float m[PW_ATT_ROWS_MAX];
#pragma unroll
        for (int j = 0; j < PW_ATT_ROWS_MAX; j++) {
            m[j] = -INFINITY;
        }
        for (int p = threadIdx.x; p < nmax; p += blockDim.x) {
            const float* kr = kv + pw_row(t[p / pageTokens].page, pageFloats, layer, 0, p % pageTokens, pageTokens, kvDim)
                    + headOff;
            float dot[PW_ATT_ROWS_MAX];
#pragma unroll
            for (int j = 0; j < PW_ATT_ROWS_MAX; j++) {
                dot[j] = 0.0f;
            }
            if ((headSize & 3) == 0) {
                const float4* k4 = reinterpret_cast<const float4*>(kr);
                for (int d4 = 0; d4 < (headSize >> 2); d4++) {
                    float4 kk = k4[d4];
#pragma unroll
                    for (int j = 0; j < PW_ATT_ROWS_MAX; j++) {
                        if (j < len) {
                            const float* qs = qsAll + (size_t) j * headSize + 4 * d4;
                            dot[j] = fmaf(qs[0], kk.x, dot[j]);
                            dot[j] = fmaf(qs[1], kk.y, dot[j]);
                            dot[j] = fmaf(qs[2], kk.z, dot[j]);
                            dot[j] = fmaf(qs[3], kk.w, dot[j]);
                        }
                    }
                }
            } else {
                for (int d = 0; d < headSize; d++) {
                    float kd = kr[d];
#pragma unroll
                    for (int j = 0; j < PW_ATT_ROWS_MAX; j++) {
                        if (j < len) {
                            dot[j] = fmaf(qsAll[(size_t) j * headSize + d], kd, dot[j]);
                        }
                    }
                }
            }
#pragma unroll
            for (int j = 0; j < PW_ATT_ROWS_MAX; j++) {
                if (j < len && p < n[j]) {
                    float sc = dot[j] * scale;
                    scoresAll[(size_t) j * positions + p] = sc;
                    m[j] = fmaxf(m[j], sc);
                }
            }
        }
        // softmax row by row: pw_attention's loops and trees, one row at a time
#pragma unroll
        for (int j = 0; j < PW_ATT_ROWS_MAX; j++) {
            if (j < len) {
                float* scores = scoresAll + (size_t) j * positions;
                float mj = pw_block_max(m[j], scratch);
                float sum = 0.0f;
                for (int p = threadIdx.x; p < n[j]; p += blockDim.x) {
                    float e = expf(scores[p] - mj);
                    scores[p] = e;
                    sum += e;
                }
                sum = pw_block_sum(sum, scratch);
                float inv = 1.0f / sum;
                for (int p = threadIdx.x; p < n[j]; p += blockDim.x) {
                    scores[p] *= inv;
                }
            }
        }
        __syncthreads();
        for (int d = threadIdx.x; d < headSize; d += blockDim.x) {
            float acc[PW_ATT_ROWS_MAX];
#pragma unroll
            for (int j = 0; j < PW_ATT_ROWS_MAX; j++) {
                acc[j] = 0.0f;
            }
            for (int p = 0; p < nmax; p++) {
                float vd = kv[pw_row(t[p / pageTokens].page, pageFloats, layer, 1, p % pageTokens, pageTokens, kvDim)
                        + headOff + d];
#pragma unroll
                for (int j = 0; j < PW_ATT_ROWS_MAX; j++) {
                    if (j < len && p < n[j]) {
                        acc[j] = fmaf(scoresAll[(size_t) j * positions + p], vd, acc[j]);
                    }
                }
            }
#pragma unroll
            for (int j = 0; j < PW_ATT_ROWS_MAX; j++) {
                if (j < len) {
                    out[(size_t) (r0 + j) * qDim + (size_t) head * headSize + d] = acc[j];
                }
            }
        }
        r0 += len;
        __syncthreads(); // the next run reuses the shared memory and `bad`
    }
}
