#pragma once
// The element types our kernels read, as float, and write from float: one overload
// each, for the fused numerics statistics (TensorStatsCuda.cu), the FP8 casts
// (amp/Fp8Cuda.cu), the LayerNorm (amp/LayerNormCuda.cu) and the loss
// (train/CrossEntropyCuda.cu); a warp's sum and a row's LayerNorm statistics; and the
// host's check after a launch.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace ampbench::cuda_device {

/// Throws std::runtime_error naming `what` and CUDA's words when `e` is an error (the
/// host's check after a launch: cudaGetLastError()).
inline void throwIfFailed(cudaError_t e, const char* what) {
    if (e != cudaSuccess) {
        throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
    }
}

__device__ __forceinline__ float toFloat(float x) {
    return x;
}
__device__ __forceinline__ float toFloat(__half x) {
    return __half2float(x);
}
__device__ __forceinline__ float toFloat(__nv_bfloat16 x) {
    return __bfloat162float(x);
}

/// Rounds to nearest even, as ATen's casts do.
__device__ __forceinline__ void fromFloat(float x, float* out) {
    *out = x;
}
__device__ __forceinline__ void fromFloat(float x, __half* out) {
    *out = __float2half_rn(x);
}
__device__ __forceinline__ void fromFloat(float x, __nv_bfloat16* out) {
    *out = __float2bfloat16_rn(x);
}

/// The sum of `v` over the 32 lanes of a warp, in every lane (all lanes must call it).
__device__ __forceinline__ float warpSum(float v) {
    for (int offset = 16; offset > 0; offset /= 2) {
        v += __shfl_xor_sync(0xffffffffu, v, offset);
    }
    return v;
}

/// A LayerNorm's statistics of one float32 row of `cols` values, by a whole warp: the
/// row's mean, then 1 / sqrt(mean squared deviation + eps) from a second read of the
/// row (from cache), in every lane. `vec`: the row starts on 16 bytes and cols % 4 == 0,
/// so four values a load.
__device__ __forceinline__ void warpRowStatistics(const float* row, int64_t cols, bool vec,
                                                  float eps, float& mean, float& rstd) {
    const int lane = threadIdx.x % 32;
    float sum = 0.f;
    if (vec) {
        for (int64_t c = lane * 4; c < cols; c += 128) {
            const float4 q = *reinterpret_cast<const float4*>(row + c);
            sum += (q.x + q.y) + (q.z + q.w);
        }
    } else {
        for (int64_t c = lane; c < cols; c += 32) {
            sum += row[c];
        }
    }
    const float m = warpSum(sum) / static_cast<float>(cols);
    float dev = 0.f;
    if (vec) {
        for (int64_t c = lane * 4; c < cols; c += 128) {
            const float4 q = *reinterpret_cast<const float4*>(row + c);
            dev += ((q.x - m) * (q.x - m) + (q.y - m) * (q.y - m)) +
                   ((q.z - m) * (q.z - m) + (q.w - m) * (q.w - m));
        }
    } else {
        for (int64_t c = lane; c < cols; c += 32) {
            dev += (row[c] - m) * (row[c] - m);
        }
    }
    mean = m;
    rstd = rsqrtf(warpSum(dev) / static_cast<float>(cols) + eps);
}

}  // namespace ampbench::cuda_device
