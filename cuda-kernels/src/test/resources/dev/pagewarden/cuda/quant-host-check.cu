// quant.cuh's decoders compiled for the host (QuantDecodersOnTheHostTest): the kernel source itself, not a
// transcription, run over matrices packed by QuantPacking. Each input file: int32 type (2 Q8_0, 4 Q4_0,
// 5 Q4_K, 6 Q5_K, 7 Q6_K: DType ordinals), rows, cols, packed bytes; the packed matrix; then the expected
// fp16 bits of W, [rows padded to 16][cols] (padding rows: any zero). Prints "<values> <mismatches>" per file.
#include <cuda_fp16.h>
#include <cstdio>
#include <vector>

// The device-only intrinsics by their host meaning: one IEEE fp32 operation each, rounded (volatile: no
// contraction into a fused multiply-add), and a plain load.
static inline float host_fmul(float a, float b) {
    volatile float r = a * b;
    return r;
}
static inline float host_fsub(float a, float b) {
    volatile float r = a - b;
    return r;
}
template <class T>
static inline T host_ldg(const T* p) {
    return *p;
}
#define __fmul_rn(a, b) host_fmul(a, b)
#define __fsub_rn(a, b) host_fsub(a, b)
#define __ldg(p) host_ldg(p)
#undef __device__
#define __device__ __host__
#include "quant.cuh"

template <class Dec>
static long check(const uint4* w, int rows, int cols, const std::vector<uint16_t>& want, long* values) {
    int kTiles = cols / 16;
    Dec dec{w, kTiles};
    long bad = 0;
    for (int rt = 0; rt < (rows + 15) / 16; rt++) {
        for (int kt = 0; kt < kTiles; kt++) {
            for (int lane = 0; lane < 32; lane++) {
                uint32_t a[4];
                dec.frag(rt, kt, lane, a);
                for (int r = 0; r < 4; r++) {
                    for (int e = 0; e < 2; e++) {
                        // PTX ISA, mma.m16n8k16 .f16 A fragment
                        int row = 16 * rt + lane / 4 + (r % 2) * 8;
                        int col = 16 * kt + 2 * (lane % 4) + e + (r / 2) * 8;
                        uint16_t got = (a[r] >> (16 * e)) & 0xffff;
                        bool ok = row >= rows ? (got & 0x7fff) == 0 : got == want[(size_t) row * cols + col];
                        if (!ok && bad++ < 3) {
                            fprintf(stderr, "W[%d][%d]: decoded %04x, expected %04x\n", row, col, got, want[(size_t) row * cols + col]);
                        }
                        (*values)++;
                    }
                }
            }
        }
    }
    return bad;
}

int main(int argc, char** argv) {
    for (int i = 1; i < argc; i++) {
        FILE* f = fopen(argv[i], "rb");
        int h[4];
        if (f == nullptr || fread(h, 4, 4, f) != 4) {
            fprintf(stderr, "cannot read %s\n", argv[i]);
            return 2;
        }
        std::vector<uint4> packed((h[3] + 15) / 16); // 16-byte aligned, as device memory is
        std::vector<uint16_t> want((size_t) (h[1] + 15) / 16 * 16 * h[2]);
        if (fread(packed.data(), 1, h[3], f) != (size_t) h[3] || fread(want.data(), 2, want.size(), f) != want.size()) {
            fprintf(stderr, "short file %s\n", argv[i]);
            return 2;
        }
        fclose(f);
        long values = 0;
        long bad = -1;
        switch (h[0]) {
            case 2: bad = check<DecQ8_0Mma>(packed.data(), h[1], h[2], want, &values); break;
            case 4: bad = check<DecQ4_0Mma>(packed.data(), h[1], h[2], want, &values); break;
            case 5: bad = check<DecQ4KMma>(packed.data(), h[1], h[2], want, &values); break;
            case 6: bad = check<DecQ5KMma>(packed.data(), h[1], h[2], want, &values); break;
            case 7: bad = check<DecQ6KMma>(packed.data(), h[1], h[2], want, &values); break;
            default: fprintf(stderr, "unknown type %d\n", h[0]); return 2;
        }
        printf("%ld %ld\n", values, bad);
    }
    return 0;
}
