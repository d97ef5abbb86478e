// The FP8 path's reductions beside its casts (Fp8Cuda.cu): a LayerNorm's row statistics
// before the cast that applies it, and the bias gradient from the casts' partial column
// sums.
#include <cuda_runtime.h>

#include <cstdint>

#include "core/amp/Fp8Cuda.h"
#include "core/numerics/DeviceFloat.cuh"

namespace ampbench::amp::cuda {
namespace {

constexpr int kThreads = 256;

// A warp a row (cuda_device::warpRowStatistics).
__global__ void rowStatisticsKernel(const float* __restrict__ in, int64_t rows, int64_t cols,
                                    float eps, float* __restrict__ mean, float* __restrict__ rstd) {
    const int64_t row = static_cast<int64_t>(blockIdx.x) * (kThreads / 32) + threadIdx.x / 32;
    if (row >= rows) {
        return;
    }
    const bool vec = cols % 4 == 0 && reinterpret_cast<uintptr_t>(in) % 16 == 0;
    float m, s;
    cuda_device::warpRowStatistics(in + row * cols, cols, vec, eps, m, s);
    if (threadIdx.x % 32 == 0) {
        mean[row] = m;
        rstd[row] = s;
    }
}

// A block of 32 columns × 16 slices of the partial rows; the slices' sums are added
// in slice order, so the result does not depend on scheduling.
constexpr int kSumColumns = 32, kSumSlices = 16;

__global__ void sumPartialsKernel(const float* __restrict__ partials, int64_t partial_rows,
                                  int64_t cols, float* __restrict__ out) {
    __shared__ float slice_sums[kSumSlices][kSumColumns];
    const int64_t c = static_cast<int64_t>(blockIdx.x) * kSumColumns + threadIdx.x;
    float s = 0.f;
    if (c < cols) {
        for (int64_t r = threadIdx.y; r < partial_rows; r += kSumSlices) {
            s += partials[r * cols + c];
        }
    }
    slice_sums[threadIdx.y][threadIdx.x] = s;
    __syncthreads();
    if (threadIdx.y == 0 && c < cols) {
        float total = 0.f;
        for (int k = 0; k < kSumSlices; ++k) {
            total += slice_sums[k][threadIdx.x];
        }
        out[c] = total;
    }
}

}  // namespace

void rowStatistics(const float* in, int64_t rows, int64_t cols, double eps, float* mean,
                   float* rstd, void* stream) {
    const int64_t blocks = (rows + kThreads / 32 - 1) / (kThreads / 32);
    rowStatisticsKernel<<<static_cast<unsigned>(blocks), kThreads, 0,
                          static_cast<cudaStream_t>(stream)>>>(in, rows, cols,
                                                               static_cast<float>(eps), mean, rstd);
    cuda_device::throwIfFailed(cudaGetLastError(), "the LayerNorm statistics");
}

void sumColumnPartials(const float* partials, int64_t partial_rows, int64_t cols, float* out,
                       void* stream) {
    const auto blocks = static_cast<unsigned>((cols + kSumColumns - 1) / kSumColumns);
    sumPartialsKernel<<<blocks, dim3(kSumColumns, kSumSlices), 0,
                        static_cast<cudaStream_t>(stream)>>>(partials, partial_rows, cols, out);
    cuda_device::throwIfFailed(cudaGetLastError(), "the FP8 bias gradient");
}

}  // namespace ampbench::amp::cuda
