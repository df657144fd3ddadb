// Quantized weights for the tensor-core GEMM (gemm.cuh): one decoder per GGUF type, each giving a lane's A
// fragment of a 16-row x 16-k tile of W (mma.m16n8k16, .f16 A; PTX ISA "Matrix Fragments for mma.m16n8k16"):
//   a[0] = {W[g][2q], W[g][2q+1]},   a[1] = {W[g+8][2q], W[g+8][2q+1]},
//   a[2] = {W[g][2q+8], W[g][2q+9]}, a[3] = {W[g+8][2q+8], W[g+8][2q+9]}     (g = lane/4, q = lane%4)
// Fragment value i (0..7) is register i/2, half i%2: row g + 8*((i/2)%2), column 2q + i%2 + 8*(i/4).
//
// Layout (QuantPacking repacks the GGUF blocks on upload; rows padded with zero bytes to a multiple of 16):
// row tile after row tile, each STRIDE(kTiles) bytes holding its parts one after another. Quants are
// lane-major per tile: lane l's values of tile kTile at [kTile * 32 + l] of the part, fragment value i at
// position i - one load per lane, a warp's loads one contiguous run. Scales are stored per pair of rows
// (g, g+8), the two a lane needs, so one load gives both. A decoder is {w, kTiles} (as gemm.cu's
// PW_GEMM_ENTRY builds it): the layout depends on kTiles = cols / 16 only.
//
// Each value is computed in fp32 exactly as the CPU's Dequantizer does it (same operations, same order,
// no fused multiply-add: __fmul_rn/__fsub_rn keep nvcc from contracting) and rounded to fp16 (nearest even).
#pragma once
#include <stdint.h>
#include <cuda_fp16.h>

// The bytes of row tile rowTile.
__device__ __forceinline__ const unsigned char* pw_q_tile(const uint4* w, int rowTile, size_t stride) {
    return reinterpret_cast<const unsigned char*>(w) + (size_t) rowTile * stride;
}

template <typename T>
__device__ __forceinline__ T pw_q_ld(const unsigned char* p, size_t index) {
    return __ldg(reinterpret_cast<const T*>(p) + index);
}

// fp16 bits of v, round to nearest even.
__device__ __forceinline__ uint32_t pw_q_h(float v) {
    return (uint32_t) __half_as_ushort(__float2half_rn(v));
}

// A register: value lo in the low half (the lower column), hi in the high half.
__device__ __forceinline__ uint32_t pw_q_pack(float lo, float hi) {
    return pw_q_h(lo) | (pw_q_h(hi) << 16);
}

__device__ __forceinline__ float pw_q_f16(uint32_t bits) {
    return __half2float(__ushort_as_half((unsigned short) (bits & 0xffffu)));
}

// Q8_0 (34 bytes / 32 values in GGUF): value = q * d. A row tile, 272 * kTiles bytes:
//   qs: [kTiles][32 lanes] 8 int8 (uint2)                        256 * kTiles
//   sc: [kTiles/2][8] fp16 pair (d of row g, d of row g+8)        16 * kTiles
// 1.0625 bytes / weight, as GGUF.
struct DecQ8_0Mma {
    static constexpr bool BF16 = false;
    const uint4* w;
    int kTiles;

    __device__ void frag(int rowTile, int kTile, int lane, uint32_t (&a)[4]) const {
        const unsigned char* p = pw_q_tile(w, rowTile, (size_t) kTiles * 272);
        uint2 u = pw_q_ld<uint2>(p, (size_t) kTile * 32 + lane);
        uint32_t s = pw_q_ld<uint32_t>(p + (size_t) kTiles * 256, (kTile >> 1) * 8 + (lane >> 2));
        float d[2] = {pw_q_f16(s), pw_q_f16(s >> 16)};
#pragma unroll
        for (int r = 0; r < 4; r++) {
            uint32_t word = r < 2 ? u.x : u.y;
            int sh = 16 * (r & 1);
            float q0 = (float) (int8_t) (word >> sh);
            float q1 = (float) (int8_t) (word >> (sh + 8));
            a[r] = pw_q_pack(__fmul_rn(q0, d[r & 1]), __fmul_rn(q1, d[r & 1]));
        }
    }
};

// Q4_0 (18 bytes / 32 values): value = (q - 8) * d. A row tile, 144 * kTiles bytes:
//   qs: [kTiles][32] uint32, nibble i = q of fragment value i     128 * kTiles
//   sc: as Q8_0's                                                   16 * kTiles
// 0.5625 bytes / weight, as GGUF.
struct DecQ4_0Mma {
    static constexpr bool BF16 = false;
    const uint4* w;
    int kTiles;

    __device__ void frag(int rowTile, int kTile, int lane, uint32_t (&a)[4]) const {
        const unsigned char* p = pw_q_tile(w, rowTile, (size_t) kTiles * 144);
        uint32_t u = pw_q_ld<uint32_t>(p, (size_t) kTile * 32 + lane);
        uint32_t s = pw_q_ld<uint32_t>(p + (size_t) kTiles * 128, (kTile >> 1) * 8 + (lane >> 2));
        float d[2] = {pw_q_f16(s), pw_q_f16(s >> 16)};
#pragma unroll
        for (int r = 0; r < 4; r++) {
            float q0 = (float) ((int) ((u >> (8 * r)) & 15) - 8);
            float q1 = (float) ((int) ((u >> (8 * r + 4)) & 15) - 8);
            a[r] = pw_q_pack(__fmul_rn(q0, d[r & 1]), __fmul_rn(q1, d[r & 1]));
        }
    }
};

// Q4_K and Q5_K share their scales: 6-bit scale sc and min m per 32 values, fp16 d and dmin per 256;
// value = (d * sc) * q - (dmin * m). In a row tile:
//   sm: [kTiles/2][8] 4 bytes {sc of row g, m of row g, sc of row g+8, m of row g+8}   16 * kTiles
//   dm: [kTiles/16][8] 8 bytes {d(g), dmin(g), d(g+8), dmin(g+8)} fp16                  4 * kTiles
struct PwKScales {
    float d[2];
    float m[2];
};

__device__ __forceinline__ PwKScales pw_k_scales(const unsigned char* sm, const unsigned char* dm, int kTile, int g) {
    uint32_t s = pw_q_ld<uint32_t>(sm, (kTile >> 1) * 8 + g);
    uint2 x = pw_q_ld<uint2>(dm, (kTile >> 4) * 8 + g);
    PwKScales k;
    k.d[0] = __fmul_rn(pw_q_f16(x.x), (float) (s & 0xff));
    k.m[0] = __fmul_rn(pw_q_f16(x.x >> 16), (float) ((s >> 8) & 0xff));
    k.d[1] = __fmul_rn(pw_q_f16(x.y), (float) ((s >> 16) & 0xff));
    k.m[1] = __fmul_rn(pw_q_f16(x.y >> 16), (float) (s >> 24));
    return k;
}

__device__ __forceinline__ float pw_k_value(const PwKScales& k, int row, int q) {
    return __fsub_rn(__fmul_rn(k.d[row], (float) q), k.m[row]);
}

// Q4_K (144 bytes / 256 values). A row tile, 148 * kTiles bytes: qs as Q4_0's (128 * kTiles), sm, dm.
// 0.578 bytes / weight (GGUF 0.5625: the 6-bit scales and mins stored as bytes).
struct DecQ4KMma {
    static constexpr bool BF16 = false;
    const uint4* w;
    int kTiles;

    __device__ void frag(int rowTile, int kTile, int lane, uint32_t (&a)[4]) const {
        const unsigned char* p = pw_q_tile(w, rowTile, (size_t) kTiles * 148);
        uint32_t u = pw_q_ld<uint32_t>(p, (size_t) kTile * 32 + lane);
        PwKScales k = pw_k_scales(p + (size_t) kTiles * 128, p + (size_t) kTiles * 144, kTile, lane >> 2);
#pragma unroll
        for (int r = 0; r < 4; r++) {
            int q0 = (u >> (8 * r)) & 15;
            int q1 = (u >> (8 * r + 4)) & 15;
            a[r] = pw_q_pack(pw_k_value(k, r & 1, q0), pw_k_value(k, r & 1, q1));
        }
    }
};

// Q5_K (176 bytes / 256 values): Q4_K's plus the fifth bits. A row tile, 180 * kTiles bytes:
//   qs: as Q4_K's (the low four bits)                                       128 * kTiles
//   qh: [kTiles][32] uint8, bit i = fifth bit of fragment value i            32 * kTiles
//   sm, dm: as Q4_K's                                                        20 * kTiles
// 0.703 bytes / weight (GGUF 0.6875).
struct DecQ5KMma {
    static constexpr bool BF16 = false;
    const uint4* w;
    int kTiles;

    __device__ void frag(int rowTile, int kTile, int lane, uint32_t (&a)[4]) const {
        const unsigned char* p = pw_q_tile(w, rowTile, (size_t) kTiles * 180);
        size_t t = (size_t) kTile * 32 + lane;
        uint32_t u = pw_q_ld<uint32_t>(p, t);
        uint32_t h = pw_q_ld<uint8_t>(p + (size_t) kTiles * 128, t);
        PwKScales k = pw_k_scales(p + (size_t) kTiles * 160, p + (size_t) kTiles * 176, kTile, lane >> 2);
#pragma unroll
        for (int r = 0; r < 4; r++) {
            int q0 = ((u >> (8 * r)) & 15) | ((h >> (2 * r)) & 1) << 4;
            int q1 = ((u >> (8 * r + 4)) & 15) | ((h >> (2 * r + 1)) & 1) << 4;
            a[r] = pw_q_pack(pw_k_value(k, r & 1, q0), pw_k_value(k, r & 1, q1));
        }
    }
};

// Q6_K (210 bytes / 256 values): value = (d * sc) * (q - 32), q six bits, sc int8 per 16 values (one per
// tile row), fp16 d per 256. A row tile, 210 * kTiles bytes:
//   ql: [kTiles][32] uint32, nibble i = low four bits of fragment value i    128 * kTiles
//   qh: [kTiles][32] uint16, bits 2i..2i+1 = its high two bits                64 * kTiles
//   sc: [kTiles][8] 2 int8 {sc of row g, sc of row g+8}                       16 * kTiles
//   d:  [kTiles/16][8] fp16 pair {d(g), d(g+8)}                                2 * kTiles
// 0.8203 bytes / weight, as GGUF.
struct DecQ6KMma {
    static constexpr bool BF16 = false;
    const uint4* w;
    int kTiles;

    __device__ void frag(int rowTile, int kTile, int lane, uint32_t (&a)[4]) const {
        int g = lane >> 2;
        const unsigned char* p = pw_q_tile(w, rowTile, (size_t) kTiles * 210);
        size_t t = (size_t) kTile * 32 + lane;
        uint32_t u = pw_q_ld<uint32_t>(p, t);
        uint32_t h = pw_q_ld<uint16_t>(p + (size_t) kTiles * 128, t);
        uint32_t s = pw_q_ld<uint16_t>(p + (size_t) kTiles * 192, (size_t) kTile * 8 + g);
        uint32_t dd = pw_q_ld<uint32_t>(p + (size_t) kTiles * 208, (kTile >> 4) * 8 + g);
        float ds[2] = {__fmul_rn(pw_q_f16(dd), (float) (int8_t) s), __fmul_rn(pw_q_f16(dd >> 16), (float) (int8_t) (s >> 8))};
#pragma unroll
        for (int r = 0; r < 4; r++) {
            int q0 = (((u >> (8 * r)) & 15) | ((h >> (4 * r)) & 3) << 4) - 32;
            int q1 = (((u >> (8 * r + 4)) & 15) | ((h >> (4 * r + 2)) & 3) << 4) - 32;
            a[r] = pw_q_pack(__fmul_rn(ds[r & 1], (float) q0), __fmul_rn(ds[r & 1], (float) q1));
        }
    }
};
