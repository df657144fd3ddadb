// Whole-page operations on the KV pool: copy with a CRC32C computed on the device (the same checksum
// the transfer path puts in every PageFrame: java.util.zip.CRC32C, Castagnoli, reflected, init and
// final xor 0xFFFFFFFF), and scrub.
#include "common.cuh"

#define PW_CRC32C_POLY 0x82F63B78u

// a * b modulo the CRC polynomial, reflected bit order (x^0 is the top bit), as zlib's multmodp.
__device__ unsigned int pw_multmodp(unsigned int a, unsigned int b) {
    unsigned int m = 1u << 31;
    unsigned int p = 0;
    for (;;) {
        if (a & m) {
            p ^= b;
            if ((a & (m - 1)) == 0) {
                break;
            }
        }
        m >>= 1;
        b = (b & 1) ? (b >> 1) ^ PW_CRC32C_POLY : b >> 1;
    }
    return p;
}

// x^(8 * bytes) modulo the polynomial: the operator that shifts a CRC over `bytes` zero bytes.
__device__ unsigned int pw_x8nmodp(unsigned long long bytes) {
    unsigned int sq = 1u << 30; // x^1
    for (int i = 0; i < 3; i++) {
        sq = pw_multmodp(sq, sq); // x^8 after three squarings
    }
    unsigned int p = 1u << 31; // x^0
    while (bytes) {
        if (bytes & 1) {
            p = pw_multmodp(sq, p);
        }
        bytes >>= 1;
        sq = pw_multmodp(sq, sq);
    }
    return p;
}

// One block per listed page: crc[b] = CRC32C of page pagesList[b] (pageBytes bytes of src); when dst is
// not null the page is also copied to dst + b * pageBytes (a staging buffer for a transfer).
// Each thread checksums one contiguous chunk; thread 0 combines the chunk CRCs in order (zlib's
// crc32_combine), so the result is the CRC of the whole page, independent of the block size.
extern "C" __global__ void pw_page_crc32c(const unsigned char* src, unsigned long long pageBytes,
                                          const int* pagesList, unsigned int* crcOut, unsigned char* dst) {
    __shared__ unsigned int table[256];
    __shared__ unsigned int crcs[1024];
    for (int i = threadIdx.x; i < 256; i += blockDim.x) {
        unsigned int c = (unsigned int) i;
        for (int k = 0; k < 8; k++) {
            c = (c & 1) ? (c >> 1) ^ PW_CRC32C_POLY : c >> 1;
        }
        table[i] = c;
    }
    __syncthreads();
    const unsigned char* page = src + (size_t) pagesList[blockIdx.x] * pageBytes;
    if (dst) {
        unsigned char* d = dst + (size_t) blockIdx.x * pageBytes;
        if (pageBytes % 16 == 0) {
            const uint4* s4 = reinterpret_cast<const uint4*>(page);
            uint4* d4 = reinterpret_cast<uint4*>(d);
            for (size_t i = threadIdx.x; i < pageBytes / 16; i += blockDim.x) {
                d4[i] = s4[i];
            }
        } else {
            for (size_t i = threadIdx.x; i < pageBytes; i += blockDim.x) {
                d[i] = page[i];
            }
        }
    }
    unsigned long long chunk = (pageBytes + blockDim.x - 1) / blockDim.x;
    unsigned long long from = (unsigned long long) threadIdx.x * chunk;
    unsigned long long to = min(from + chunk, pageBytes);
    unsigned int c = 0xFFFFFFFFu;
    for (unsigned long long i = from; i < to; i++) {
        c = table[(c ^ page[i]) & 0xff] ^ (c >> 8);
    }
    crcs[threadIdx.x] = from < to ? ~c : 0u; // an empty chunk: CRC of nothing is 0
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned int shiftFull = pw_x8nmodp(chunk);
        unsigned int crc = crcs[0];
        for (unsigned int t = 1; t < blockDim.x; t++) {
            unsigned long long f = (unsigned long long) t * chunk;
            if (f >= pageBytes) {
                break;
            }
            unsigned long long len = min(f + chunk, pageBytes) - f;
            unsigned int shift = len == chunk ? shiftFull : pw_x8nmodp(len);
            crc = pw_multmodp(shift, crc) ^ crcs[t];
        }
        crcOut[blockIdx.x] = crc;
    }
}

// One block per listed page: zeroes the page and clears its tag (no owner, nothing written). The epoch
// stays: the next allocation bumps it on the host and the tag is rewritten before any read.
extern "C" __global__ void pw_page_scrub(unsigned int* kv, PageTag* tags, unsigned long long pageWords,
                                         const int* pagesList) {
    int page = pagesList[blockIdx.x];
    unsigned int* p = kv + (size_t) page * pageWords;
    for (size_t i = threadIdx.x; i < pageWords; i += blockDim.x) {
        p[i] = 0u;
    }
    if (threadIdx.x == 0) {
        tags[page].owner = 0;
        tags[page].written = 0;
    }
}
