// Tensor-core products for every batch size: out[t][o] = sum_k W[o][k] * x[t][k] with
// mma.sync.m16n8k16 (f16 or bf16 inputs, f32 accumulate). Included by gemm.cu (F16/BF16 weights) and by
// the quantised entries, which bring their own decoders.
//
// Weights: 16-row x 16-k tiles, each lane's A fragment pre-arranged by the host (MmaPacking) or made by
// a decoder. A DECODER is any type with
//     __device__ void frag(int rowTile, int kTile, int lane, uint32_t (&a)[4]) const;
//     static constexpr bool BF16;   // the a[] halves are bf16 (else f16)
// yielding the lane's a0..a7 (PTX "Matrix Fragments for mma.m16n8k16": g = lane/4, q = lane%4;
// a0,a1: row g, k 2q,2q+1; a2,a3: row g+8, k 2q,2q+1; a4,a5: row g, k 2q+8,2q+9; a6,a7: row g+8,
// k 2q+8,2q+9), two per register, the lower k in the low half.
//
// Schedule (GemmPlan on the host; it depends on the matrix shape only, never on the token count):
// block x = one 16-row tile (of up to three stacked matrices), its warps = the S k-slices (slice s
// covers k-tiles [s*kTiles/S, (s+1)*kTiles/S), in order), block y = 64 tokens (8 n-tiles of 8, the
// accumulators in registers). Each warp's accumulator of output (o, t) runs through its slice's k-tiles
// in ascending order, one mma per k-tile; the S partial sums are then added in shared memory from
// slice 0 to slice S-1, left to right, and the epilogue runs on that sum. The token count changes only
// grid.y and how many n-tiles are live; a token's column of an mma never mixes with another's, so its
// outputs are bit-identical whatever its batch and its place in it.
#pragma once
#include "common.cuh"
#include <cuda_bf16.h>

#define PW_GEMM_STORE 0  // out_j[t][o] = sum, over up to three matrices stacked in one launch (Q, K, V)
#define PW_GEMM_ADD 1    // out_0[t][o] += sum: the residual add of pw_add
#define PW_GEMM_SWIGLU 2 // out_0[t][o] = silu(sum of matrix 0) * sum of matrix 1: pw_swiglu's float ops

#define PW_GEMM_TOKENS 64   // tokens per block (grid.y covers the rest)
#define PW_GEMM_NTILES 8    // n-tiles of 8 tokens per block
#define PW_GEMM_UNROLL 4    // A tiles loaded before their mmas (bytes in flight): k-tiles x matrices
#define PW_GEMM_REGION 1024 // floats of shared memory per partial sum region: 8 n-tiles x 32 lanes x 4

// F16 / BF16 weights packed by MmaPacking: tile (rowTile, kTile) is 512 bytes at
// (rowTile * kTiles + kTile) * 512, lane l's a0..a7 the 16 bytes at l * 16: one 128-bit load per lane.
template <bool B16>
struct DecPackedMma {
    const uint4* tiles;
    int kTiles;
    __device__ __forceinline__ void frag(int rowTile, int kTile, int lane, uint32_t (&a)[4]) const {
        uint4 u = __ldg(tiles + ((size_t) rowTile * kTiles + kTile) * 32 + lane);
        a[0] = u.x;
        a[1] = u.y;
        a[2] = u.z;
        a[3] = u.w;
    }
    static constexpr bool BF16 = B16;
};
typedef DecPackedMma<false> DecF16Mma;
typedef DecPackedMma<true> DecBF16Mma;

// d += a * b for one 16x8x16 tile.
template <bool BF16>
__device__ __forceinline__ void pw_mma(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
    if (BF16) {
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                     "{%0,%1,%2,%3};\n"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    } else {
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                     "{%0,%1,%2,%3};\n"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    }
}

// Two activations as one f16x2 / bf16x2 register, round to nearest (lo in the low half).
template <bool BF16>
__device__ __forceinline__ uint32_t pw_pack2(float lo, float hi) {
    if (BF16) {
        __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
        return *reinterpret_cast<uint32_t*>(&h);
    } else {
        __half2 h = __floats2half2_rn(lo, hi);
        return *reinterpret_cast<uint32_t*>(&h);
    }
}

// Values k and k+1 of a row (k even), 0 past inDim (padding): one 8-byte load when inDim is even.
__device__ __forceinline__ float2 pw_gemm_pair(const float* p, int k, int inDim) {
    if ((inDim & 1) == 0 && k < inDim) {
        return *reinterpret_cast<const float2*>(p + k);
    }
    return make_float2(k < inDim ? p[k] : 0.0f, k + 1 < inDim ? p[k + 1] : 0.0f);
}

// Activations (t, k), (t, k+1) as the B operand sees them, before rounding: x, or with the RMSNorm
// prologue g[k] * (invRms[t] * x) - pw_rmsnorm's float ops.
template <bool BF16>
__device__ __forceinline__ uint32_t pw_gemm_b(float2 x, float2 g, float inv, bool norm) {
    if (norm) {
        return pw_pack2<BF16>(g.x * (inv * x.x), g.y * (inv * x.y));
    }
    return pw_pack2<BF16>(x.x, x.y);
}

// One block: row tile `rowTile` of the N matrices d[0..N) (N = 2: SwiGLU's gate and up), tokens
// [blockIdx.y * 64, +64) of `tokens`, of which the first NT n-tiles are kept in registers: NT = 8, or
// NT = 1 for launches of at most 8 tokens (decode: an eighth of the accumulators, so more warps and
// more tiles in flight). NT changes which registers exist, never what an accumulator sums or in which order.
template <int N, int NT, typename Dec>
__device__ __forceinline__ void pw_gemm_block(const Dec (&d)[N], int rowTile, float* out, int outRows, int mode,
                                              const float* x, const float* invRms, const float* g, int tokens,
                                              int inDim, int slices) {
    extern __shared__ float pw_red[]; // (slices + N - 1) regions of PW_GEMM_REGION floats
    constexpr bool BF16 = Dec::BF16;
    int lane = threadIdx.x & 31;
    int slice = threadIdx.x >> 5;
    int gq = lane >> 2; // fragment group: a row for A and C, a token column for B
    int q = lane & 3;
    int kTiles = (inDim + 15) / 16;
    int kBegin = slice * kTiles / slices;
    int kEnd = (slice + 1) * kTiles / slices;
    int t0 = blockIdx.y * PW_GEMM_TOKENS;
    int live = min(NT, (tokens - t0 + 7) / 8);

    float acc[N][NT][4];
#pragma unroll
    for (int n = 0; n < N; n++) {
#pragma unroll
        for (int nt = 0; nt < NT; nt++) {
#pragma unroll
            for (int j = 0; j < 4; j++) {
                acc[n][nt][j] = 0.0f;
            }
        }
    }
    // this lane's B column in each n-tile: token t0 + nt*8 + gq, its RMSNorm scale loaded once
    bool norm = g != nullptr;
    float inv[NT];
#pragma unroll
    for (int nt = 0; nt < NT; nt++) {
        int t = t0 + nt * 8 + gq;
        inv[nt] = norm && t < tokens ? invRms[t] : 1.0f;
    }
    // U k-tiles of N matrices: the same bytes in flight for SwiGLU's two matrices as for one (fewer
    // registers); each accumulator's order is unchanged.
    constexpr int U = (NT == 1 ? 2 : 1) * PW_GEMM_UNROLL / N;
    for (int kt0 = kBegin; kt0 < kEnd; kt0 += U) {
        uint32_t a[U][N][4];
#pragma unroll
        for (int u = 0; u < U; u++) {
            if (kt0 + u < kEnd) {
#pragma unroll
                for (int n = 0; n < N; n++) {
                    d[n].frag(rowTile, kt0 + u, lane, a[u][n]);
                }
            }
        }
#pragma unroll
        for (int u = 0; u < U; u++) {
            if (kt0 + u < kEnd) {
                int k = (kt0 + u) * 16 + 2 * q;
                float2 g0 = make_float2(0.0f, 0.0f);
                float2 g8 = g0;
                if (norm) {
                    g0 = pw_gemm_pair(g, k, inDim);
                    g8 = pw_gemm_pair(g, k + 8, inDim);
                }
#pragma unroll
                for (int nt = 0; nt < NT; nt++) {
                    if (nt < live) {
                        int t = t0 + nt * 8 + gq;
                        uint32_t b[2] = {0u, 0u};
                        if (t < tokens) {
                            const float* xr = x + (size_t) t * inDim;
                            b[0] = pw_gemm_b<BF16>(pw_gemm_pair(xr, k, inDim), g0, inv[nt], norm);
                            b[1] = pw_gemm_b<BF16>(pw_gemm_pair(xr, k + 8, inDim), g8, inv[nt], norm);
                        }
#pragma unroll
                        for (int n = 0; n < N; n++) {
                            pw_mma<BF16>(acc[n][nt], a[u][n], b);
                        }
                    }
                }
            }
        }
    }

    // Combine: matrix n's slice s goes to region n + s; the sum, slice 0 + 1 + ... + S-1 left to right,
    // stays in region n (each value read and written by one thread), so matrix n+1 can reuse the rest.
    int values = live * 128;
#pragma unroll
    for (int n = 0; n < N; n++) {
        float* mine = pw_red + (size_t) (n + slice) * PW_GEMM_REGION;
#pragma unroll
        for (int nt = 0; nt < NT; nt++) {
            if (nt < live) {
#pragma unroll
                for (int j = 0; j < 4; j++) {
                    mine[(nt * 32 + lane) * 4 + j] = acc[n][nt][j];
                }
            }
        }
        __syncthreads();
        for (int i = threadIdx.x; i < values; i += blockDim.x) {
            float* r = pw_red + (size_t) n * PW_GEMM_REGION + i;
            float s = r[0];
            for (int sl = 1; sl < slices; sl++) {
                s += r[(size_t) sl * PW_GEMM_REGION];
            }
            r[0] = s;
        }
        __syncthreads();
    }

    // Epilogue: value i = (n-tile, lane, j) of the C fragment: row g (+8 for j >= 2), token 2q + (j & 1).
    for (int i = threadIdx.x; i < values; i += blockDim.x) {
        int nt = i >> 7;
        int l = (i >> 2) & 31;
        int j = i & 3;
        int o = rowTile * 16 + (l >> 2) + (j >> 1) * 8;
        int t = t0 + nt * 8 + 2 * (l & 3) + (j & 1);
        if (o < outRows && t < tokens) {
            float* dst = out + (size_t) t * outRows + o;
            float s = pw_red[i];
            if (mode == PW_GEMM_SWIGLU) {
                float up = pw_red[PW_GEMM_REGION + i];
                *dst = s / (1.0f + expf(-s)) * up;
            } else if (mode == PW_GEMM_ADD) {
                *dst = *dst + s;
            } else {
                *dst = s;
            }
        }
    }
}

// The whole launch: grid.x = the row tiles of matrix 0, then 1, then 2 (STORE only; SWIGLU: matrix 0's
// row tiles, gate d0 and up d1 in the same block), grid.y = ceil(tokens / 64), blockDim = 32 * slices,
// dynamic shared memory (slices + N - 1) * 4 KiB (N = 2 for SWIGLU, else 1). NT = 1 only for tokens <= 8.
template <int NT = PW_GEMM_NTILES, typename Dec>
__device__ __forceinline__ void pw_gemm_run(const Dec& d0, const Dec& d1, const Dec& d2, float* out0, float* out1,
                                            float* out2, int rows0, int rows1, int rows2, const float* x,
                                            const float* invRms, const float* g, int tokens, int inDim, int slices,
                                            int mode) {
    int rt = blockIdx.x;
    if (mode == PW_GEMM_SWIGLU) {
        const Dec gateUp[2] = {d0, d1};
        pw_gemm_block<2, NT>(gateUp, rt, out0, rows0, mode, x, invRms, g, tokens, inDim, slices);
        return;
    }
    int tiles0 = (rows0 + 15) / 16;
    int tiles1 = (rows1 + 15) / 16;
    Dec d = d0;
    float* out = out0;
    int rows = rows0;
    if (rt >= tiles0 + tiles1) {
        d = d2;
        out = out2;
        rows = rows2;
        rt -= tiles0 + tiles1;
    } else if (rt >= tiles0) {
        d = d1;
        out = out1;
        rows = rows1;
        rt -= tiles0;
    }
    const Dec one[1] = {d};
    pw_gemm_block<1, NT>(one, rt, out, rows, mode, x, invRms, g, tokens, inDim, slices);
}
