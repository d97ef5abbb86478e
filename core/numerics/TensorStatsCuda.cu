#include "core/numerics/TensorStatsCuda.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "core/numerics/DeviceFloat.cuh"

namespace ampbench::numerics::cuda {
namespace {

using cuda_device::toFloat;

// Plain (no initialisers) so an array of it can live in shared memory.
struct Tally {
    unsigned long long zeros, subnormal, normal, finite;
    float absmax;
    unsigned long long above;

    __device__ __forceinline__ void add(float v, float below_subnormal, float below_normal,
                                        float above_largest) {
        const float a = fabsf(v);
        zeros += a == 0.f;
        subnormal += a < below_subnormal;
        normal += a < below_normal;
        finite += a < INFINITY;                      // false for NaN and inf
        above += a > above_largest && a < INFINITY;  // finite only; false for NaN
        absmax = a > absmax ? a : absmax;            // false for NaN: NaN is no magnitude
    }
};

constexpr int kThreads = 256;

template <typename T>
__global__ void statsKernel(const T* __restrict__ x, int64_t n, float below_subnormal,
                            float below_normal, float above_largest, unsigned long long* slot) {
    Tally t{0, 0, 0, 0, 0.f, 0};
    const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
    const int64_t first = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    int64_t done = 0;
    // 16-byte loads where the storage is aligned for them, one value at a time after.
    constexpr int kPerLoad = 16 / sizeof(T);
    if (reinterpret_cast<uintptr_t>(x) % 16 == 0) {
        const int64_t loads = n / kPerLoad;
        const uint4* v = reinterpret_cast<const uint4*>(x);
        for (int64_t i = first; i < loads; i += stride) {
            const uint4 packed = v[i];
            const T* e = reinterpret_cast<const T*>(&packed);
#pragma unroll
            for (int k = 0; k < kPerLoad; ++k) {
                t.add(toFloat(e[k]), below_subnormal, below_normal, above_largest);
            }
        }
        done = loads * kPerLoad;
    }
    for (int64_t i = done + first; i < n; i += stride) {
        t.add(toFloat(x[i]), below_subnormal, below_normal, above_largest);
    }
    // The warp's sum, then the block's through shared memory, then one atomic each.
    for (int offset = 16; offset > 0; offset /= 2) {
        t.zeros += __shfl_down_sync(0xffffffffu, t.zeros, offset);
        t.subnormal += __shfl_down_sync(0xffffffffu, t.subnormal, offset);
        t.normal += __shfl_down_sync(0xffffffffu, t.normal, offset);
        t.finite += __shfl_down_sync(0xffffffffu, t.finite, offset);
        t.above += __shfl_down_sync(0xffffffffu, t.above, offset);
        t.absmax = fmaxf(t.absmax, __shfl_down_sync(0xffffffffu, t.absmax, offset));
    }
    __shared__ Tally warps[kThreads / 32];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    if (lane == 0) {
        warps[warp] = t;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        Tally sum = warps[0];
        for (int w = 1; w < kThreads / 32; ++w) {
            sum.zeros += warps[w].zeros;
            sum.subnormal += warps[w].subnormal;
            sum.normal += warps[w].normal;
            sum.finite += warps[w].finite;
            sum.above += warps[w].above;
            sum.absmax = fmaxf(sum.absmax, warps[w].absmax);
        }
        atomicAdd(slot + 0, sum.zeros);
        atomicAdd(slot + 1, sum.subnormal);
        atomicAdd(slot + 2, sum.normal);
        atomicAdd(slot + 3, sum.finite);
        // Non-negative floats order as their bit patterns do.
        atomicMax(slot + 4, static_cast<unsigned long long>(__float_as_uint(sum.absmax)));
        atomicAdd(slot + 5, sum.above);
    }
}

/// Enough blocks to fill the device a few times over; each thread strides on.
int blocksFor(int64_t n, int per_load) {
    static const int limit = [] {
        int device = 0, sms = 0;
        cudaGetDevice(&device);
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
        return std::max(1, sms) * 8;
    }();
    const int64_t per_block = int64_t{kThreads} * per_load * 4;
    const int64_t wanted = (n + per_block - 1) / per_block;
    return static_cast<int>(std::clamp<int64_t>(wanted, 1, limit));
}

template <typename T>
void launch(const void* data, int64_t n, float below_subnormal, float below_normal,
            float above_largest, unsigned long long* slot, cudaStream_t stream) {
    statsKernel<T><<<blocksFor(n, 16 / sizeof(T)), kThreads, 0, stream>>>(
        static_cast<const T*>(data), n, below_subnormal, below_normal, above_largest, slot);
}

}  // namespace

void accumulateStats(const void* data, Element element, int64_t n, float below_subnormal,
                     float below_normal, float above_largest, unsigned long long* slot,
                     void* stream) {
    if (n <= 0) {
        return;
    }
    auto s = static_cast<cudaStream_t>(stream);
    switch (element) {
        case Element::Float:
            launch<float>(data, n, below_subnormal, below_normal, above_largest, slot, s);
            break;
        case Element::Half:
            launch<__half>(data, n, below_subnormal, below_normal, above_largest, slot, s);
            break;
        case Element::BFloat16:
            launch<__nv_bfloat16>(data, n, below_subnormal, below_normal, above_largest, slot, s);
            break;
    }
    if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess) {
        throw std::runtime_error(std::string("numerics statistics kernel: ") +
                                 cudaGetErrorString(e));
    }
}

}  // namespace ampbench::numerics::cuda
