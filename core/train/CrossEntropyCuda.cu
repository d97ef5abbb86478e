#include "core/train/CrossEntropyCuda.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "core/numerics/DeviceFloat.cuh"

namespace ampbench::train::cuda {
namespace {

using cuda_device::fromFloat;
using cuda_device::toFloat;

constexpr int kThreads = 512;

/// Visits a row's `cols` values spread over the block's threads: `f(column, value)`.
/// Four 2-byte values a load (8 bytes) between a head up to the row's first 8-byte
/// boundary and a tail, where `aligned` (the logits on 2-byte boundaries, as ever).
template <typename T, typename F>
__device__ __forceinline__ void forEachInRow(const T* row, int64_t cols, bool aligned, F&& f) {
    int64_t head = 0;
    if (aligned) {
        const auto misalignment = static_cast<int64_t>((reinterpret_cast<uintptr_t>(row) % 8) / 2);
        head = min(cols, misalignment ? 4 - misalignment : int64_t{0});
    } else {
        head = cols;  // every value on its own
    }
    for (int64_t c = threadIdx.x; c < head; c += blockDim.x) {
        f(c, toFloat(row[c]));
    }
    const int64_t quads = (cols - head) / 4;
    const T* body = row + head;
    for (int64_t q = threadIdx.x; q < quads; q += blockDim.x) {
        const uint2 raw = reinterpret_cast<const uint2*>(body)[q];
        const T* v = reinterpret_cast<const T*>(&raw);
#pragma unroll
        for (int k = 0; k < 4; ++k) {
            f(head + 4 * q + k, toFloat(v[k]));
        }
    }
    for (int64_t c = head + 4 * quads + threadIdx.x; c < cols; c += blockDim.x) {
        f(c, toFloat(row[c]));
    }
}

/// (max, Σ exp(x - max)) of two parts of a row; an empty part has max -inf.
__device__ __forceinline__ void combine(float& m, float& s, float m2, float s2) {
    const float top = fmaxf(m, m2);
    if (top == -INFINITY) {
        return;  // both empty
    }
    const float a = m == -INFINITY ? 0.f : s * __expf(m - top);
    const float b = m2 == -INFINITY ? 0.f : s2 * __expf(m2 - top);
    m = top;
    s = a + b;
}

/// The row's log Σ exp, in every thread.
__device__ float blockLogSumExp(float m, float s) {
    for (int offset = 16; offset > 0; offset /= 2) {
        combine(m, s, __shfl_xor_sync(0xffffffffu, m, offset),
                __shfl_xor_sync(0xffffffffu, s, offset));
    }
    __shared__ float ms[kThreads / 32], ss[kThreads / 32];
    __shared__ float result;
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    if (lane == 0) {
        ms[warp] = m;
        ss[warp] = s;
    }
    __syncthreads();
    if (warp == 0) {
        const int warps = blockDim.x / 32;
        m = lane < warps ? ms[lane] : -INFINITY;
        s = lane < warps ? ss[lane] : 0.f;
        for (int offset = 16; offset > 0; offset /= 2) {
            combine(m, s, __shfl_xor_sync(0xffffffffu, m, offset),
                    __shfl_xor_sync(0xffffffffu, s, offset));
        }
        if (lane == 0) {
            // +inf in the row makes the log-softmax NaN, as ATen's does.
            result = m == INFINITY ? NAN : m + logf(s);
        }
    }
    __syncthreads();
    return result;
}

template <typename T>
__global__ void __launch_bounds__(kThreads)
    forwardKernel(const T* logits, int64_t cols, int64_t stride, bool aligned,
                  const int64_t* target, int64_t ignore, float* loss, float* lse) {
    const int64_t r = blockIdx.x;
    const int64_t t = target[r];
    if (t == ignore) {
        if (threadIdx.x == 0) {
            loss[r] = 0.f;
            lse[r] = 0.f;
        }
        return;
    }
    const T* row = logits + r * stride;
    float m = -INFINITY, s = 0.f;
    forEachInRow(row, cols, aligned, [&](int64_t, float x) {
        if (x > m) {
            s = s * __expf(m - x) + 1.f;  // m = -inf: exp(-inf) = 0
            m = x;
        } else if (x != -INFINITY) {
            s += __expf(x - m);  // NaN stays NaN
        }
    });
    const float row_lse = blockLogSumExp(m, s);
    if (threadIdx.x == 0) {
        lse[r] = row_lse;
        loss[r] = t >= 0 && t < cols ? row_lse - toFloat(row[t]) : NAN;
    }
}

template <typename T>
__global__ void __launch_bounds__(kThreads)
    backwardKernel(const T* logits, int64_t cols, int64_t stride, bool aligned,
                   const int64_t* target, int64_t ignore, const float* lse, const float* scale,
                   T* grad) {
    const int64_t r = blockIdx.x;
    const int64_t t = target[r];
    const T* row = logits + r * stride;
    T* out = grad + r * cols;
    if (t == ignore) {
        // Zeros, as ATen's: not exp(x - 0) · 0, which is NaN where x > 88.
        for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
            fromFloat(0.f, out + c);
        }
        return;
    }
    const float k = *scale;
    const float row_lse = lse[r];
    forEachInRow(row, cols, aligned, [&](int64_t c, float x) {
        const float p = __expf(x - row_lse);
        fromFloat((p - (c == t ? 1.f : 0.f)) * k, out + c);
    });
}

using cuda_device::throwIfFailed;

}  // namespace

void crossEntropyForward(const void* logits, Logits dtype, int64_t rows, int64_t cols,
                         int64_t row_stride, const int64_t* target, int64_t ignore_index,
                         float* loss, float* lse, void* stream) {
    if (rows == 0) {
        return;
    }
    const bool aligned = reinterpret_cast<uintptr_t>(logits) % 2 == 0;
    auto s = static_cast<cudaStream_t>(stream);
    if (dtype == Logits::BFloat16) {
        forwardKernel<<<rows, kThreads, 0, s>>>(static_cast<const __nv_bfloat16*>(logits), cols,
                                                row_stride, aligned, target, ignore_index, loss,
                                                lse);
    } else {
        forwardKernel<<<rows, kThreads, 0, s>>>(static_cast<const __half*>(logits), cols,
                                                row_stride, aligned, target, ignore_index, loss,
                                                lse);
    }
    throwIfFailed(cudaGetLastError(), "cross-entropy forward kernel");
}

void crossEntropyBackward(const void* logits, Logits dtype, int64_t rows, int64_t cols,
                          int64_t row_stride, const int64_t* target, int64_t ignore_index,
                          const float* lse, const float* scale, void* grad, void* stream) {
    if (rows == 0) {
        return;
    }
    const bool aligned = reinterpret_cast<uintptr_t>(logits) % 2 == 0;
    auto s = static_cast<cudaStream_t>(stream);
    if (dtype == Logits::BFloat16) {
        backwardKernel<<<rows, kThreads, 0, s>>>(static_cast<const __nv_bfloat16*>(logits), cols,
                                                 row_stride, aligned, target, ignore_index, lse,
                                                 scale, static_cast<__nv_bfloat16*>(grad));
    } else {
        backwardKernel<<<rows, kThreads, 0, s>>>(static_cast<const __half*>(logits), cols,
                                                 row_stride, aligned, target, ignore_index, lse,
                                                 scale, static_cast<__half*>(grad));
    }
    throwIfFailed(cudaGetLastError(), "cross-entropy backward kernel");
}

}  // namespace ampbench::train::cuda
