// Row-wise operations of the Llama forward step. Every kernel works on one token row at a time with
// a fixed block shape, so a row's result never depends on the other rows of the batch.
#include "common.cuh"

// out[j] = x[row(j)] / rms(x[row(j)]) * w, for j < rows; row(j) = rowIndex ? rowIndex[j] : j.
// As the CPU does: inv = 1 / sqrt(mean(x^2) + eps) in double, out = w * (inv * x). One block per row.
extern "C" __global__ void pw_rmsnorm(float* out, const float* x, const float* w, const int* rowIndex, int n,
                                      float eps) {
    __shared__ float scratch[32];
    int j = blockIdx.x;
    int row = rowIndex ? rowIndex[j] : j;
    const float* xr = x + (size_t) row * n;
    float ss = 0.0f;
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        ss = fmaf(xr[i], xr[i], ss);
    }
    ss = pw_block_sum(ss, scratch);
    float inv = (float) (1.0 / sqrt((double) (ss / n + eps)));
    float* o = out + (size_t) j * n;
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        o[i] = w[i] * (inv * xr[i]);
    }
}

// RoPE of each head, q [rows x qDim], k [rows x kvDim]: adjacent pairs (llama2.c, llama) or halves
// (neox != 0: qwen2, qwen3), angles from the host's tables (cos/sin [seqLen x headSize/2], the CPU
// backend's own). One thread per pair of q; the pairs of k below kvDim / 2 ride along.
extern "C" __global__ void pw_rope(float* q, float* k, const int* rowPos, const float* cosT, const float* sinT,
                                   int rows, int qDim, int kvDim, int headSize, int neox) {
    int half = headSize / 2;
    int pairs = qDim / 2;
    long long idx = (long long) blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= (long long) rows * pairs) {
        return;
    }
    int r = (int) (idx / pairs);
    int j = (int) (idx % pairs);
    int ia;
    int ib;
    int pair = pw_rope_pair(j, headSize, neox, &ia, &ib);
    int pos = rowPos[r];
    float c = cosT[(size_t) pos * half + pair];
    float s = sinT[(size_t) pos * half + pair];
    float* qr = q + (size_t) r * qDim;
    pw_rotate(&qr[ia], &qr[ib], c, s);
    if (j < kvDim / 2) {
        float* kr = k + (size_t) r * kvDim;
        pw_rotate(&kr[ia], &kr[ib], c, s);
    }
}

// The Q, K and V biases (qwen2): q[r] += bq, k[r] += bk, v[r] += bv for every token row r, one float add
// each (the CPU's x + b). One thread per element of a row's q|k|v.
extern "C" __global__ void pw_qkv_bias(float* q, float* k, float* v, const float* bq, const float* bk, const float* bv,
                                       int rows, int qDim, int kvDim) {
    int width = qDim + 2 * kvDim;
    long long idx = (long long) blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= (long long) rows * width) {
        return;
    }
    int r = (int) (idx / width);
    int i = (int) (idx % width);
    if (i < qDim) {
        q[(size_t) r * qDim + i] += bq[i];
    } else if (i < qDim + kvDim) {
        i -= qDim;
        k[(size_t) r * kvDim + i] += bk[i];
    } else {
        i -= qDim + kvDim;
        v[(size_t) r * kvDim + i] += bv[i];
    }
}

// gate = silu(gate) * up, elementwise over n values.
extern "C" __global__ void pw_swiglu(float* gate, const float* up, long long n) {
    long long i = (long long) blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float g = gate[i];
        gate[i] = g / (1.0f + expf(-g)) * up[i];
    }
}

// x += y over n values (the residual stream).
extern "C" __global__ void pw_add(float* x, const float* y, long long n) {
    long long i = (long long) blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        x[i] += y[i];
    }
}

// In-place softmax of each row of x [rows x n]; one block per row, fixed reduction tree.
extern "C" __global__ void pw_softmax_rows(float* x, int n) {
    __shared__ float scratch[32];
    float* xr = x + (size_t) blockIdx.x * n;
    float m = -INFINITY;
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        m = fmaxf(m, xr[i]);
    }
    m = pw_block_max(m, scratch);
    float sum = 0.0f;
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        float e = expf(xr[i] - m);
        xr[i] = e;
        sum += e;
    }
    sum = pw_block_sum(sum, scratch);
    float inv = 1.0f / sum;
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        xr[i] *= inv;
    }
}

// out[row] = index of the largest value of x[row] (the lowest index among equals); one block per row.
extern "C" __global__ void pw_argmax_rows(const float* x, int n, int* out) {
    __shared__ float bestV[1024];
    __shared__ int bestI[1024];
    const float* xr = x + (size_t) blockIdx.x * n;
    float v = -INFINITY;
    int vi = 0x7fffffff;
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        float xi = xr[i];
        if (xi > v || (xi == v && i < vi)) {
            v = xi;
            vi = i;
        }
    }
    bestV[threadIdx.x] = v;
    bestI[threadIdx.x] = vi;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) {
            float ov = bestV[threadIdx.x + s];
            int oi = bestI[threadIdx.x + s];
            if (ov > bestV[threadIdx.x] || (ov == bestV[threadIdx.x] && oi < bestI[threadIdx.x])) {
                bestV[threadIdx.x] = ov;
                bestI[threadIdx.x] = oi;
            }
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        out[blockIdx.x] = bestI[0];
    }
}

// invRms[row] = 1 / sqrt(mean(x[row]^2) + eps): pw_rmsnorm's scale, with its block shape (launch it with
// the same block size) and reduction tree, so it is the same float. The products then apply it in their
// prologue (gemm.cuh) instead of reading a normalised copy of x. One block per row.
extern "C" __global__ void pw_rms_scale(float* invRms, const float* x, int n, float eps) {
    __shared__ float scratch[32];
    const float* xr = x + (size_t) blockIdx.x * n;
    float ss = 0.0f;
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        ss = fmaf(xr[i], xr[i], ss);
    }
    ss = pw_block_sum(ss, scratch);
    if (threadIdx.x == 0) {
        invRms[blockIdx.x] = (float) (1.0 / sqrt((double) (ss / n + eps)));
    }
}
