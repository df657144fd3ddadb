// Matrix-vector and small-batch matrix products: out[r][o] = sum_c W[o][c] * x[r][c].
// One warp per output row o; the warp reads its weight row once per tile of up to TILE token rows.
// Batch invariance: lane l always owns the same column chunks in the same order and the warp sum is a
// fixed xor tree, so out[r][o] is the same whatever the other rows of the batch are, or how many.
#include "common.cuh"

#define TILE 8

// x[r][c .. c+V) loaded as float4s where V allows (inDim % V == 0 keeps them aligned).
template <int V>
__device__ __forceinline__ void pw_load_x(const float* xr, float* xv) {
    if (V % 4 == 0) {
#pragma unroll
        for (int j = 0; j < V; j += 4) {
            float4 f = *reinterpret_cast<const float4*>(xr + j);
            xv[j] = f.x;
            xv[j + 1] = f.y;
            xv[j + 2] = f.z;
            xv[j + 3] = f.w;
        }
    } else {
#pragma unroll
        for (int j = 0; j < V; j++) {
            xv[j] = xr[j];
        }
    }
}

template <int V, typename Dec>
__device__ __forceinline__ void pw_matvec(const Dec& dec, const float* x, float* out, int rows, int outDim, int inDim) {
    int lane = threadIdx.x & 31;
    int o = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
    if (o >= outDim) {
        return; // whole warps leave together
    }
    int chunks = inDim / V;
    for (int r0 = 0; r0 < rows; r0 += TILE) {
        int tb = min(TILE, rows - r0);
        float acc[TILE];
#pragma unroll
        for (int t = 0; t < TILE; t++) {
            acc[t] = 0.0f;
        }
        // four chunks' loads in flight per lane: with one, a warp waits out the memory latency per
        // chunk and the small matrices (few warps per multiprocessor) read far below the bandwidth
#pragma unroll 4
        for (int ch = lane; ch < chunks; ch += 32) {
            float w[V];
            dec(o, ch, w);
#pragma unroll
            for (int t = 0; t < TILE; t++) {
                if (t < tb) {
                    float xv[V];
                    pw_load_x<V>(x + (size_t) (r0 + t) * inDim + (size_t) ch * V, xv);
#pragma unroll
                    for (int j = 0; j < V; j++) {
                        acc[t] = fmaf(w[j], xv[j], acc[t]);
                    }
                }
            }
        }
#pragma unroll
        for (int t = 0; t < TILE; t++) {
            if (t < tb) {
                float s = pw_warp_sum(acc[t]);
                if (lane == 0) {
                    out[(size_t) (r0 + t) * outDim + o] = s;
                }
            }
        }
    }
}

struct DecF32x4 {
    const float* w;
    int inDim;
    __device__ void operator()(int o, int ch, float* v) const {
        float4 f = *reinterpret_cast<const float4*>(w + (size_t) o * inDim + (size_t) ch * 4);
        v[0] = f.x;
        v[1] = f.y;
        v[2] = f.z;
        v[3] = f.w;
    }
};

struct DecF32x1 {
    const float* w;
    int inDim;
    __device__ void operator()(int o, int ch, float* v) const {
        v[0] = w[(size_t) o * inDim + ch];
    }
};

struct DecF16x8 {
    const __half* w;
    int inDim;
    __device__ void operator()(int o, int ch, float* v) const {
        uint4 u = *reinterpret_cast<const uint4*>(w + (size_t) o * inDim + (size_t) ch * 8);
        const __half2* h = reinterpret_cast<const __half2*>(&u);
#pragma unroll
        for (int j = 0; j < 4; j++) {
            float2 f = __half22float2(h[j]);
            v[2 * j] = f.x;
            v[2 * j + 1] = f.y;
        }
    }
};

struct DecF16x1 {
    const __half* w;
    int inDim;
    __device__ void operator()(int o, int ch, float* v) const {
        v[0] = __half2float(w[(size_t) o * inDim + ch]);
    }
};

struct DecBF16x8 {
    const unsigned short* w;
    int inDim;
    __device__ void operator()(int o, int ch, float* v) const {
        uint4 u = *reinterpret_cast<const uint4*>(w + (size_t) o * inDim + (size_t) ch * 8);
        const unsigned int* p = reinterpret_cast<const unsigned int*>(&u);
#pragma unroll
        for (int j = 0; j < 4; j++) {
            v[2 * j] = __uint_as_float(p[j] << 16);
            v[2 * j + 1] = __uint_as_float(p[j] & 0xffff0000u);
        }
    }
};

struct DecBF16x1 {
    const unsigned short* w;
    int inDim;
    __device__ void operator()(int o, int ch, float* v) const {
        v[0] = pw_bf16(w[(size_t) o * inDim + ch]);
    }
};

// Q8_0 as the host repacks it: all int8 quants [outDim x inDim] (16-byte aligned rows), and one fp16 scale
// per 32 values [outDim x inDim/32]. A chunk is 16 quants: half a block, one scale.
struct DecQ8x16 {
    const signed char* qs;
    const __half* scales;
    int inDim;
    __device__ void operator()(int o, int ch, float* v) const {
        size_t at = (size_t) o * inDim + (size_t) ch * 16;
        int4 u = *reinterpret_cast<const int4*>(qs + at);
        const signed char* q = reinterpret_cast<const signed char*>(&u);
        float s = __half2float(scales[at / 32]);
#pragma unroll
        for (int j = 0; j < 16; j++) {
            v[j] = s * (float) q[j];
        }
    }
};

// ---- One token row (a batch-1 decode step); off unless -Dpagewarden.gpu.matvec1=true ----
// A warp's dot product is pw_matvec's first-accumulator chain exactly (lane l takes chunks l, l+32, ...
// in order, each chunk's values in order, then the same warp sum), so every output is bit-identical to
// the tiled kernel's, and the epilogues are the separate kernels' float operations: a step alone and the
// same step in a batch give the same logits (GpuChecks.decodeInvariance). One accumulator instead of
// TILE: fewer registers, more warps per multiprocessor, several chunks' loads in flight per lane.
#define PW_STORE 0  // out_j[row] = dot over up to three matrices stacked in one launch (Q, K, V)
#define PW_ADD 1    // out_0[row] += dot: pw_add's residual add
#define PW_SWIGLU 2 // out_0[row] = silu(dot of matrix 0) * dot of matrix 1, row by row: pw_swiglu

// N rows of one token row's products at once (N = 2: gate and up of a hidden unit), each its own chain.
template <int V, int N, typename Dec>
__device__ __forceinline__ void pw_dot1(const Dec (&d)[N], int o, const float* x, int inDim, int lane, float (&s)[N]) {
    int chunks = inDim / V;
    float acc[N];
#pragma unroll
    for (int n = 0; n < N; n++) {
        acc[n] = 0.0f;
    }
#pragma unroll 4
    for (int ch = lane; ch < chunks; ch += 32) {
        float xv[V];
        pw_load_x<V>(x + (size_t) ch * V, xv);
#pragma unroll
        for (int n = 0; n < N; n++) {
            float w[V];
            d[n](o, ch, w);
#pragma unroll
            for (int j = 0; j < V; j++) {
                acc[n] = fmaf(w[j], xv[j], acc[n]);
            }
        }
    }
#pragma unroll
    for (int n = 0; n < N; n++) {
        s[n] = pw_warp_sum(acc[n]);
    }
}

template <int V, typename Dec>
__device__ __forceinline__ void pw_rows1(Dec d0, Dec d1, Dec d2, float* out0, float* out1, float* out2, int rows0,
                                         int rows1, int rows2, const float* x, int inDim, int mode) {
    int lane = threadIdx.x & 31;
    int o = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
    if (mode == PW_SWIGLU) {
        if (o >= rows0) {
            return; // whole warps leave together
        }
        const Dec gateUp[2] = {d0, d1};
        float gu[2];
        pw_dot1<V, 2>(gateUp, o, x, inDim, lane, gu);
        if (lane == 0) {
            out0[o] = gu[0] / (1.0f + expf(-gu[0])) * gu[1];
        }
        return;
    }
    Dec d = d0;
    float* out = out0;
    if (o >= rows0) {
        if (mode != PW_STORE) {
            return;
        }
        o -= rows0;
        d = d1;
        out = out1;
        if (o >= rows1) {
            o -= rows1;
            d = d2;
            out = out2;
            if (o >= rows2) {
                return;
            }
        }
    }
    const Dec one[1] = {d};
    float s[1];
    pw_dot1<V, 1>(one, o, x, inDim, lane, s);
    if (lane == 0) {
        out[o] = mode == PW_ADD ? out[o] + s[0] : s[0];
    }
}

// The entries, per weight type: the tiled kernel (any rows) and the batch-1 one (pw_rows1_*: up to
// three matrices, null where unused). A vector decoder when inDim allows aligned wide loads, else one
// value at a time.
#define PW_MATVEC_ENTRY(NAME, KERNEL, T, V, DEC_V, DEC_1)                                                   \
    extern "C" __global__ void NAME(const T* w, const float* x, float* out, int rows, int outDim, int inDim) { \
        if (inDim % V == 0) {                                                                                  \
            KERNEL<V>(DEC_V{w, inDim}, x, out, rows, outDim, inDim);                                           \
        } else {                                                                                               \
            KERNEL<1>(DEC_1{w, inDim}, x, out, rows, outDim, inDim);                                           \
        }                                                                                                      \
    }

PW_MATVEC_ENTRY(pw_matvec_f32, pw_matvec, float, 4, DecF32x4, DecF32x1)
PW_MATVEC_ENTRY(pw_matvec_f16, pw_matvec, __half, 8, DecF16x8, DecF16x1)
PW_MATVEC_ENTRY(pw_matvec_bf16, pw_matvec, unsigned short, 8, DecBF16x8, DecBF16x1)

#define PW_ROWS1_ENTRY(NAME, T, V, DEC_V, DEC_1)                                                                  \
    extern "C" __global__ void NAME(const T* w0, const T* w1, const T* w2, float* out0, float* out1, float* out2,  \
                                    int rows0, int rows1, int rows2, const float* x, int inDim, int mode) {      \
        if (inDim % V == 0) {                                                                                     \
            pw_rows1<V>(DEC_V{w0, inDim}, DEC_V{w1, inDim}, DEC_V{w2, inDim}, out0, out1, out2, rows0, rows1,     \
                        rows2, x, inDim, mode);                                                                   \
        } else {                                                                                                  \
            pw_rows1<1>(DEC_1{w0, inDim}, DEC_1{w1, inDim}, DEC_1{w2, inDim}, out0, out1, out2, rows0, rows1,     \
                        rows2, x, inDim, mode);                                                                   \
        }                                                                                                         \
    }

PW_ROWS1_ENTRY(pw_rows1_f32, float, 4, DecF32x4, DecF32x1)
PW_ROWS1_ENTRY(pw_rows1_f16, __half, 8, DecF16x8, DecF16x1)
PW_ROWS1_ENTRY(pw_rows1_bf16, unsigned short, 8, DecBF16x8, DecBF16x1)

// inDim is a multiple of 32 for Q8_0 (the host refuses anything else).
extern "C" __global__ void pw_matvec_q8_0(const signed char* qs, const __half* scales, const float* x, float* out,
                                          int rows, int outDim, int inDim) {
    pw_matvec<16>(DecQ8x16{qs, scales, inDim}, x, out, rows, outDim, inDim);
}

extern "C" __global__ void pw_rows1_q8_0(const signed char* q0, const __half* s0, const signed char* q1,
                                         const __half* s1, const signed char* q2, const __half* s2, float* out0,
                                         float* out1, float* out2, int rows0, int rows1, int rows2, const float* x,
                                         int inDim, int mode) {
    pw_rows1<16>(DecQ8x16{q0, s0, inDim}, DecQ8x16{q1, s1, inDim}, DecQ8x16{q2, s2, inDim}, out0, out1, out2, rows0,
                 rows1, rows2, x, inDim, mode);
}
