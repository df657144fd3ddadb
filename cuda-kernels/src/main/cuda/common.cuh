// Shared by every Pagewarden kernel. Host code (GpuBackend) packs the structs below byte for byte:
// change one here and change StepPlan/DeviceLayouts there, then run build-kernels.sh.
#pragma once
#include <stdint.h>
#include <cuda_fp16.h>

// One page's owner tag in device memory, written from the pool's metadata before each step.
struct PageTag {
    long long owner;   // request id owning the page (0: none)
    long long epoch;   // allocation epoch of the page
    long long written; // token slots written in this epoch
};

// One page table entry of a sequence: the physical page and the epoch the sequence expects.
struct TableEntry {
    int page;
    int pad;
    long long epoch;
};

// One sequence of a step.
struct SeqDesc {
    long long request; // expected owner of every page in its table
    int startPos;      // first position this step writes; [0, startPos) must be written already
    int endPos;        // one past the last position of this step
    int tableOffset;   // first entry of its page table in the flat table
    int tablePages;    // entries in its page table
};

// Error codes in the per-sequence flag (the larger code wins when several fire).
#define PW_OK 0
#define PW_OWNER_TAG_MISMATCH 1
#define PW_UNWRITTEN_SLOT_READ 2
#define PW_PAGE_OUT_OF_RANGE 3

// Records a refused page for a sequence: flags[2*seq] = code (max wins), flags[2*seq+1] = page.
__device__ __forceinline__ void pw_flag(int* flags, int seq, int code, int page) {
    atomicMax(&flags[2 * seq], code);
    flags[2 * seq + 1] = page;
}

// Checks one page of a sequence's table against its device tag. needWritten: slots that must have been
// written in the page's current epoch (0 for a page the step itself writes first).
__device__ __forceinline__ int pw_check_page(const PageTag* tags, int pages, const SeqDesc& s, const TableEntry& e,
                                             int needWritten) {
    if (e.page < 0 || e.page >= pages) {
        return PW_PAGE_OUT_OF_RANGE;
    }
    PageTag t = tags[e.page];
    if (t.owner != s.request || t.epoch != e.epoch) {
        return PW_OWNER_TAG_MISMATCH;
    }
    if (t.written < needWritten) {
        return PW_UNWRITTEN_SLOT_READ;
    }
    return PW_OK;
}

// Fixed-shape warp sum: the same order whatever the launch, so results never depend on the batch.
__device__ __forceinline__ float pw_warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) {
        v += __shfl_xor_sync(0xffffffffu, v, o);
    }
    return v;
}

__device__ __forceinline__ float pw_warp_max(float v) {
    for (int o = 16; o > 0; o >>= 1) {
        v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    }
    return v;
}

// Block sum in a fixed tree (warp sums, then warp 0 sums the warp results in lane order).
// scratch: at least 32 floats of shared memory. Every thread gets the result.
__device__ __forceinline__ float pw_block_sum(float v, float* scratch) {
    int lane = threadIdx.x & 31;
    int warp = threadIdx.x >> 5;
    int warps = (blockDim.x + 31) >> 5;
    v = pw_warp_sum(v);
    __syncthreads();
    if (lane == 0) {
        scratch[warp] = v;
    }
    __syncthreads();
    if (warp == 0) {
        float w = lane < warps ? scratch[lane] : 0.0f;
        w = pw_warp_sum(w);
        if (lane == 0) {
            scratch[0] = w;
        }
    }
    __syncthreads();
    float r = scratch[0];
    __syncthreads();
    return r;
}

__device__ __forceinline__ float pw_block_max(float v, float* scratch) {
    int lane = threadIdx.x & 31;
    int warp = threadIdx.x >> 5;
    int warps = (blockDim.x + 31) >> 5;
    v = pw_warp_max(v);
    __syncthreads();
    if (lane == 0) {
        scratch[warp] = v;
    }
    __syncthreads();
    if (warp == 0) {
        float w = lane < warps ? scratch[lane] : -INFINITY;
        w = pw_warp_max(w);
        if (lane == 0) {
            scratch[0] = w;
        }
    }
    __syncthreads();
    float r = scratch[0];
    __syncthreads();
    return r;
}

// RoPE of one pair (a, b) by the angle with cosine c and sine s, in the CPU's float operations and no
// others: every product rounded on its own, no fma contraction, so pw_rope and the fused RoPE of the KV
// append and the attention's Q load give the same bits.
__device__ __forceinline__ void pw_rotate(float* a, float* b, float c, float s) {
    float x = *a;
    float y = *b;
    *a = __fsub_rn(__fmul_rn(x, c), __fmul_rn(y, s));
    *b = __fadd_rn(__fmul_rn(x, s), __fmul_rn(y, c));
}

// The element offsets (within a row) of RoPE pair j of a row of heads: head j / half, pair j % half;
// adjacent elements (llama) or the two halves of the head (NEOX: qwen2, qwen3). Returns the pair index
// within its head, which picks the angle.
__device__ __forceinline__ int pw_rope_pair(int j, int headSize, int neox, int* ia, int* ib) {
    int half = headSize >> 1;
    int head = j / half;
    int p = j - head * half;
    *ia = head * headSize + (neox ? p : 2 * p);
    *ib = *ia + (neox ? half : 1);
    return p;
}

// RoPE pair j of a row of heads, read from src, rotated by position pos's angles and written to dst (the
// fused paths: K on its way into its page, Q on its way into shared memory). *ia, *ib: the pair's offsets.
__device__ __forceinline__ void pw_rope_copy(const float* src, float* dst, int j, int headSize, int neox,
                                             const float* cosT, const float* sinT, int pos, int* ia, int* ib) {
    int half = headSize >> 1;
    int pair = pw_rope_pair(j, headSize, neox, ia, ib);
    float a = src[*ia];
    float b = src[*ib];
    pw_rotate(&a, &b, cosT[(size_t) pos * half + pair], sinT[(size_t) pos * half + pair]);
    dst[*ia] = a;
    dst[*ib] = b;
}

// bf16 -> f32 by bit shift (exact; needs no sm_80 intrinsic, so the PTX stays portable).
__device__ __forceinline__ float pw_bf16(unsigned short b) {
    return __uint_as_float(((unsigned int) b) << 16);
}
