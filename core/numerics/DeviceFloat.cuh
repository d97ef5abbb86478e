#pragma once
// The element types our kernels read, as float: one overload each, for the fused
// numerics statistics (TensorStatsCuda.cu) and the FP8 casts (amp/Fp8Cuda.cu).
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

}  // namespace ampbench::cuda_device
