// Entries of the tensor-core product (gemm.cuh): F16 and BF16 packed by MmaPacking, the quantized types in
// QuantPacking's row tiles decoded by quant.cuh.
// w0..w2: packed matrices (null where unused), x: [tokens x inDim] f32, invRms/g: the RMSNorm prologue
// (both null: x as it is). Launch shape from GemmPlan. pw_gemm_*_n8: the same schedule for launches of
// at most 8 tokens, with one n-tile of accumulators (fewer registers: more warps per multiprocessor).
#include "gemm.cuh"
#include "quant.cuh"

#define PW_GEMM_ENTRY(NAME, NT, MIN_BLOCKS, DEC)                                                                 \
    extern "C" __global__ void __launch_bounds__(256, MIN_BLOCKS)                                                \
        NAME(const uint4* w0, const uint4* w1, const uint4* w2, float* out0, float* out1, float* out2, int rows0, \
             int rows1, int rows2, const float* x, const float* invRms, const float* g, int tokens, int inDim,   \
             int slices, int mode) {                                                                             \
        int kTiles = (inDim + 15) / 16;                                                                          \
        pw_gemm_run<NT>(DEC{w0, kTiles}, DEC{w1, kTiles}, DEC{w2, kTiles}, out0, out1, out2, rows0, rows1,       \
                        rows2, x, invRms, g, tokens, inDim, slices, mode);                                       \
    }

PW_GEMM_ENTRY(pw_gemm_f16, 8, 2, DecF16Mma)
PW_GEMM_ENTRY(pw_gemm_bf16, 8, 2, DecBF16Mma)
PW_GEMM_ENTRY(pw_gemm_f16_n8, 1, 3, DecF16Mma)
PW_GEMM_ENTRY(pw_gemm_bf16_n8, 1, 3, DecBF16Mma)
PW_GEMM_ENTRY(pw_gemm_q8_0, 8, 2, DecQ8_0Mma)
PW_GEMM_ENTRY(pw_gemm_q4_0, 8, 2, DecQ4_0Mma)
PW_GEMM_ENTRY(pw_gemm_q4_k, 8, 2, DecQ4KMma)
PW_GEMM_ENTRY(pw_gemm_q5_k, 8, 2, DecQ5KMma)
PW_GEMM_ENTRY(pw_gemm_q6_k, 8, 2, DecQ6KMma)
PW_GEMM_ENTRY(pw_gemm_q8_0_n8, 1, 3, DecQ8_0Mma)
PW_GEMM_ENTRY(pw_gemm_q4_0_n8, 1, 3, DecQ4_0Mma)
PW_GEMM_ENTRY(pw_gemm_q4_k_n8, 1, 3, DecQ4KMma)
PW_GEMM_ENTRY(pw_gemm_q5_k_n8, 1, 3, DecQ5KMma)
PW_GEMM_ENTRY(pw_gemm_q6_k_n8, 1, 3, DecQ6KMma)
