#pragma once
// The element types our kernels read, as float, and write from float: one overload
// each, for the fused numerics statistics (TensorStatsCuda.cu), the FP8 casts
// (amp/Fp8Cuda.cu), the LayerNorm (amp/LayerNormCuda.cu) and the loss
// (train/CrossEntropyCuda.cu); and a warp's sum.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace ampbench::cuda_device {

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

}  // namespace ampbench::cuda_device
