#include "core/amp/LayerNormCuda.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "core/numerics/DeviceFloat.cuh"

namespace ampbench::amp::cuda {
namespace {

using cuda_device::fromFloat;
using cuda_device::toFloat;
using cuda_device::warpSum;

constexpr int kWarps = 8;  // rows in flight per block, a warp each
constexpr int kThreads = kWarps * 32;
constexpr int64_t kMaxPartials = 256;

using cuda_device::throwIfFailed;

// A warp a row: its statistics (cuda_device::warpRowStatistics), then the output (a
// third read of the row, from cache).
template <typename T>
__global__ void __launch_bounds__(kThreads)
    layerNormForwardKernel(const float* __restrict__ x, int64_t rows, int cols,
                           const float* __restrict__ gamma, const float* __restrict__ beta,
                           float eps, T* __restrict__ y, float* __restrict__ mean,
                           float* __restrict__ rstd) {
    const int lane = threadIdx.x % 32;
    const bool vec = cols % 4 == 0 && reinterpret_cast<uintptr_t>(x) % 16 == 0;
    const int64_t stride = static_cast<int64_t>(gridDim.x) * kWarps;
    for (int64_t r = static_cast<int64_t>(blockIdx.x) * kWarps + threadIdx.x / 32; r < rows;
         r += stride) {
        const float* row = x + r * cols;
        float m, s;
        cuda_device::warpRowStatistics(row, cols, vec, eps, m, s);
        T* out = y + r * cols;
        for (int c = lane; c < cols; c += 32) {
            fromFloat((row[c] - m) * s * gamma[c] + beta[c], out + c);
        }
        if (lane == 0) {
            mean[r] = m;
            rstd[r] = s;
        }
    }
}

// A warp a row; lane l keeps the column sums of columns l, l + 32, ... (K of them) in
// registers over the rows it visits, then the block adds its warps' sums warp by warp
// (a fixed order) and writes one partial row of each.
template <typename T, int K>
__global__ void __launch_bounds__(kThreads)
    layerNormBackwardKernel(const T* __restrict__ dy, const float* __restrict__ x,
                            const float* __restrict__ mean, const float* __restrict__ rstd,
                            const float* __restrict__ gamma, int64_t rows, int cols,
                            float* __restrict__ dx, float* __restrict__ partials) {
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    float dgamma[K], dbeta[K];
#pragma unroll
    for (int k = 0; k < K; ++k) {
        dgamma[k] = 0.f;
        dbeta[k] = 0.f;
    }
    const int64_t stride = static_cast<int64_t>(gridDim.x) * kWarps;
    for (int64_t r = static_cast<int64_t>(blockIdx.x) * kWarps + warp; r < rows; r += stride) {
        const float m = mean[r], s = rstd[r];
        const float* xr = x + r * cols;
        const T* dyr = dy + r * cols;
        float sum_g = 0.f, sum_gx = 0.f;
#pragma unroll
        for (int k = 0; k < K; ++k) {
            const int c = lane + 32 * k;
            if (c < cols) {
                const float xh = (xr[c] - m) * s;
                const float d = toFloat(dyr[c]);
                const float g = d * gamma[c];
                sum_g += g;
                sum_gx += g * xh;
                dgamma[k] += d * xh;
                dbeta[k] += d;
            }
        }
        const float mean_g = warpSum(sum_g) / static_cast<float>(cols);
        const float mean_gx = warpSum(sum_gx) / static_cast<float>(cols);
        float* dxr = dx + r * cols;
#pragma unroll
        for (int k = 0; k < K; ++k) {
            const int c = lane + 32 * k;
            if (c < cols) {
                const float xh = (xr[c] - m) * s;
                const float g = toFloat(dyr[c]) * gamma[c];
                dxr[c] = s * (g - mean_g - xh * mean_gx);
            }
        }
    }
    extern __shared__ float sums[];  // [2][cols]
    for (int w = 0; w < kWarps; ++w) {
        if (warp == w) {
#pragma unroll
            for (int k = 0; k < K; ++k) {
                const int c = lane + 32 * k;
                if (c < cols) {
                    sums[c] = w == 0 ? dgamma[k] : sums[c] + dgamma[k];
                    sums[cols + c] = w == 0 ? dbeta[k] : sums[cols + c] + dbeta[k];
                }
            }
        }
        __syncthreads();
    }
    float* out = partials + static_cast<int64_t>(blockIdx.x) * 2 * cols;
    for (int c = threadIdx.x; c < 2 * cols; c += kThreads) {
        out[c] = sums[c];
    }
}

template <typename T, int K>
void launchBackward(const void* dy, const float* x, const float* mean, const float* rstd,
                    const float* gamma, int64_t rows, int cols, float* dx, float* partials,
                    cudaStream_t stream) {
    const auto blocks = static_cast<unsigned>(layerNormPartialRows(rows));
    const size_t shared = 2 * static_cast<size_t>(cols) * sizeof(float);
    layerNormBackwardKernel<T, K><<<blocks, kThreads, shared, stream>>>(
        static_cast<const T*>(dy), x, mean, rstd, gamma, rows, cols, dx, partials);
}

template <typename T>
void backwardFor(const void* dy, const float* x, const float* mean, const float* rstd,
                 const float* gamma, int64_t rows, int cols, float* dx, float* partials,
                 cudaStream_t stream) {
    const int per_lane = (cols + 31) / 32;
    // As few column sums a lane as the row needs: they live in registers.
    if (per_lane <= 8) {
        launchBackward<T, 8>(dy, x, mean, rstd, gamma, rows, cols, dx, partials, stream);
    } else if (per_lane <= 16) {
        launchBackward<T, 16>(dy, x, mean, rstd, gamma, rows, cols, dx, partials, stream);
    } else if (per_lane <= 24) {
        launchBackward<T, 24>(dy, x, mean, rstd, gamma, rows, cols, dx, partials, stream);
    } else if (per_lane <= 32) {
        launchBackward<T, 32>(dy, x, mean, rstd, gamma, rows, cols, dx, partials, stream);
    } else if (per_lane <= 48) {
        launchBackward<T, 48>(dy, x, mean, rstd, gamma, rows, cols, dx, partials, stream);
    } else {
        launchBackward<T, 64>(dy, x, mean, rstd, gamma, rows, cols, dx, partials, stream);
    }
}

void checkShape(int64_t rows, int64_t cols, Element type) {
    if (cols < 1 || cols > kLayerNormMaxCols || rows < 0) {
        throw std::invalid_argument("layerNorm: " + std::to_string(cols) + " columns (1 to " +
                                    std::to_string(kLayerNormMaxCols) + " supported)");
    }
    if (type == Element::Float) {
        throw std::invalid_argument("layerNorm: the half-precision side must be fp16 or bf16");
    }
}

}  // namespace

int64_t layerNormPartialRows(int64_t rows) {
    return std::clamp<int64_t>((rows + kWarps - 1) / kWarps, 1, kMaxPartials);
}

void layerNormToHalf(const float* x, int64_t rows, int64_t cols, const float* gamma,
                     const float* beta, double eps, Element y_type, void* y, float* mean,
                     float* rstd, void* stream) {
    checkShape(rows, cols, y_type);
    if (rows == 0) {
        return;
    }
    const auto s = static_cast<cudaStream_t>(stream);
    const auto blocks =
        static_cast<unsigned>(std::min<int64_t>((rows + kWarps - 1) / kWarps, 65535));
    const auto c = static_cast<int>(cols);
    const auto e = static_cast<float>(eps);
    if (y_type == Element::BFloat16) {
        layerNormForwardKernel<__nv_bfloat16><<<blocks, kThreads, 0, s>>>(
            x, rows, c, gamma, beta, e, static_cast<__nv_bfloat16*>(y), mean, rstd);
    } else {
        layerNormForwardKernel<__half><<<blocks, kThreads, 0, s>>>(
            x, rows, c, gamma, beta, e, static_cast<__half*>(y), mean, rstd);
    }
    throwIfFailed(cudaGetLastError(), "layerNormToHalf");
}

void layerNormFromHalfBackward(const void* dy, Element dy_type, const float* x, const float* mean,
                               const float* rstd, const float* gamma, int64_t rows, int64_t cols,
                               float* dx, float* partials, void* stream) {
    checkShape(rows, cols, dy_type);
    const auto s = static_cast<cudaStream_t>(stream);
    const auto c = static_cast<int>(cols);
    if (dy_type == Element::BFloat16) {
        backwardFor<__nv_bfloat16>(dy, x, mean, rstd, gamma, rows, c, dx, partials, s);
    } else {
        backwardFor<__half>(dy, x, mean, rstd, gamma, rows, c, dx, partials, s);
    }
    throwIfFailed(cudaGetLastError(), "layerNormFromHalfBackward");
}

}  // namespace ampbench::amp::cuda
