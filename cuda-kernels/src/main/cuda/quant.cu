// The decoders of quant.cuh written out: pw_unpack_tiles_<type> stores the fragments of the given tiles of
// a packed matrix as floats, in W's row-major order, so the device check can compare every decoded value,
// bit for bit, with the CPU's decode rounded to fp16 (GpuChecks.quantDecode).
#include "quant.cuh"

// One warp per listed tile: tiles[2t] = rowTile, tiles[2t+1] = kTile. out: [16 * rowTiles][cols] floats.
template <typename Dec>
__device__ __forceinline__ void pw_unpack_tiles(const Dec& dec, const int* tiles, int nTiles, float* out, int cols) {
    int lane = threadIdx.x & 31;
    int t = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
    if (t >= nTiles) {
        return;
    }
    int rowTile = tiles[2 * t];
    int kTile = tiles[2 * t + 1];
    uint32_t a[4];
    dec.frag(rowTile, kTile, lane, a);
    int g = lane >> 2;
    int q = lane & 3;
#pragma unroll
    for (int r = 0; r < 4; r++) {
        size_t row = (size_t) rowTile * 16 + g + 8 * (r & 1);
        size_t col = (size_t) kTile * 16 + 2 * q + 8 * (r >> 1);
        out[row * cols + col] = pw_q_f16(a[r]);
        out[row * cols + col + 1] = pw_q_f16(a[r] >> 16);
    }
}

#define PW_UNPACK_ENTRY(NAME, DEC)                                                                   \
    extern "C" __global__ void NAME(const uint4* w, int cols, const int* tiles, int nTiles, float* out) { \
        pw_unpack_tiles(DEC{w, cols / 16}, tiles, nTiles, out, cols);                                      \
    }

PW_UNPACK_ENTRY(pw_unpack_tiles_q8_0, DecQ8_0Mma)
PW_UNPACK_ENTRY(pw_unpack_tiles_q4_0, DecQ4_0Mma)
PW_UNPACK_ENTRY(pw_unpack_tiles_q4_k, DecQ4KMma)
PW_UNPACK_ENTRY(pw_unpack_tiles_q5_k, DecQ5KMma)
PW_UNPACK_ENTRY(pw_unpack_tiles_q6_k, DecQ6KMma)
