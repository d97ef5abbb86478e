#include "core/amp/Fp8Cuda.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cfloat>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "core/numerics/DeviceFloat.cuh"

namespace ampbench::amp::cuda {
namespace {

using cuda_device::toFloat;

constexpr int kThreads = 256;

// |x| as ordered bits: for non-negative floats the integer order is the float order,
// +inf above every finite value. NaN and inf both become +inf's bits, so a
// non-finite tensor has amax +inf.
__device__ __forceinline__ int magnitudeBits(float v) {
    const float a = fabsf(v);
    return a < INFINITY ? __float_as_int(a) : __float_as_int(INFINITY);
}

// The block's largest magnitude bits, in thread 0.
__device__ __forceinline__ int blockMax(int bits) {
    for (int offset = 16; offset > 0; offset /= 2) {
        bits = max(bits, __shfl_down_sync(0xffffffffu, bits, offset));
    }
    __shared__ int warps[kThreads / 32];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    if (lane == 0) {
        warps[warp] = bits;
    }
    __syncthreads();
    if (warp == 0) {
        bits = lane < kThreads / 32 ? warps[lane] : 0;
        for (int offset = 16; offset > 0; offset /= 2) {
            bits = max(bits, __shfl_down_sync(0xffffffffu, bits, offset));
        }
    }
    return bits;
}

__device__ __forceinline__ unsigned long long blockSum(unsigned long long v) {
    for (int offset = 16; offset > 0; offset /= 2) {
        v += __shfl_down_sync(0xffffffffu, v, offset);
    }
    __shared__ unsigned long long warps[kThreads / 32];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    __syncthreads();  // the shared array may still be read by a previous call
    if (lane == 0) {
        warps[warp] = v;
    }
    __syncthreads();
    v = 0;
    if (warp == 0) {
        v = lane < kThreads / 32 ? warps[lane] : 0;
        for (int offset = 16; offset > 0; offset /= 2) {
            v += __shfl_down_sync(0xffffffffu, v, offset);
        }
    }
    return v;
}

__device__ __forceinline__ float scaleFrom(float amax, float room) {
    if (!(amax > 0.f) || !(amax < INFINITY)) {
        return 1.f;
    }
    return fminf(room / amax, FLT_MAX);
}

// One value of a cast: its FP8 byte, its magnitude into `bits`, its counts.
struct CastTally {
    int bits = 0;
    unsigned long long saturated = 0, flushed = 0, subnormal = 0, nonfinite = 0;

    __device__ __forceinline__ unsigned char take(float v, float s, float largest, float smallest,
                                                  float smallest_normal,
                                                  __nv_fp8_interpretation_t format, bool count) {
        bits = max(bits, magnitudeBits(v));
        const float y = v * s;
        const bool finite = fabsf(v) < INFINITY;
        if (count) {
            const float a = fabsf(y);
            saturated += finite && a > largest;
            flushed += a > 0.f && a < smallest;
            subnormal += a > 0.f && a < smallest_normal;
            nonfinite += !finite;
        }
        // Non-finite stays visible as NaN; finite values saturate at the largest.
        return __nv_cvt_float_to_fp8(finite ? y : __int_as_float(0x7fc00000), __NV_SATFINITE,
                                     format);
    }

    // The block's tallies into amax_out and counts (every thread of the block calls it).
    __device__ __forceinline__ void publish(float* amax_out, unsigned long long* counts) {
        if (amax_out) {
            const int b = blockMax(bits);
            if (threadIdx.x == 0) {
                atomicMax(reinterpret_cast<int*>(amax_out), b);
            }
        }
        if (counts) {
            const unsigned long long sat = blockSum(saturated), fl = blockSum(flushed),
                                     sub = blockSum(subnormal), nf = blockSum(nonfinite);
            if (threadIdx.x == 0) {
                atomicAdd(counts + 0, sat);
                atomicAdd(counts + 1, fl);
                atomicAdd(counts + 2, sub);
                atomicAdd(counts + 3, nf);
            }
        }
    }
};

constexpr int kTile = 32;  // a kTile × kTile tile per step, 256 threads: 8 rows at a time

template <typename T>
__global__ void castTransposeKernel(const T* __restrict__ in, int64_t rows, int64_t cols,
                                    unsigned char* __restrict__ out,
                                    unsigned char* __restrict__ out_t,
                                    __nv_fp8_interpretation_t format, float largest, float smallest,
                                    float smallest_normal, const float* scale, const float* amax_in,
                                    float margin_factor, float* inv_scale, float* amax_out,
                                    unsigned long long* counts) {
    const float s = scale ? *scale : scaleFrom(*amax_in, largest / margin_factor);
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        *inv_scale = 1.f / s;
    }
    __shared__ unsigned char tile[kTile][kTile + 4];
    const int tx = threadIdx.x % kTile, ty = threadIdx.x / kTile;
    constexpr int kRowsPerPass = kThreads / kTile;
    const int64_t tile_cols = (cols + kTile - 1) / kTile;
    const int64_t tiles = tile_cols * ((rows + kTile - 1) / kTile);
    CastTally t;
    for (int64_t i = blockIdx.x; i < tiles; i += gridDim.x) {
        const int64_t r0 = (i / tile_cols) * kTile, c0 = (i % tile_cols) * kTile;
        for (int k = ty; k < kTile; k += kRowsPerPass) {
            const int64_t r = r0 + k, c = c0 + tx;
            if (r < rows && c < cols) {
                const unsigned char q = t.take(toFloat(in[r * cols + c]), s, largest, smallest,
                                               smallest_normal, format, counts != nullptr);
                out[r * cols + c] = q;
                tile[k][tx] = q;
            }
        }
        __syncthreads();
        for (int k = ty; k < kTile; k += kRowsPerPass) {
            const int64_t c = c0 + k, r = r0 + tx;  // row c of the transpose, column r
            if (c < cols && r < rows) {
                out_t[c * rows + r] = tile[tx][k];
            }
        }
        __syncthreads();
    }
    t.publish(amax_out, counts);
}

// Eight consecutive values as floats, from 16-byte-aligned storage.
__device__ __forceinline__ void load8(const float* p, float (&v)[8]) {
    const float4 a = reinterpret_cast<const float4*>(p)[0];
    const float4 b = reinterpret_cast<const float4*>(p)[1];
    v[0] = a.x, v[1] = a.y, v[2] = a.z, v[3] = a.w, v[4] = b.x, v[5] = b.y, v[6] = b.z, v[7] = b.w;
}
template <typename T>
__device__ __forceinline__ void load8(const T* p, float (&v)[8]) {
    const uint4 packed = reinterpret_cast<const uint4*>(p)[0];
    const T* e = reinterpret_cast<const T*>(&packed);
#pragma unroll
    for (int k = 0; k < 8; ++k) {
        v[k] = toFloat(e[k]);
    }
}

constexpr int kWideTile = 64;  // 64 × 64 tiles, each thread 8 consecutive values a pass

// castTransposeKernel with 16-byte loads and 8-byte stores: rows and cols multiples
// of 8, the input 16-byte aligned.
template <typename T>
__global__ void castTransposeWideKernel(const T* __restrict__ in, int64_t rows, int64_t cols,
                                        unsigned char* __restrict__ out,
                                        unsigned char* __restrict__ out_t,
                                        __nv_fp8_interpretation_t format, float largest,
                                        float smallest, float smallest_normal, const float* scale,
                                        const float* amax_in, float margin_factor, float* inv_scale,
                                        float* amax_out, unsigned long long* counts) {
    const float s = scale ? *scale : scaleFrom(*amax_in, largest / margin_factor);
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        *inv_scale = 1.f / s;
    }
    __shared__ unsigned char tile[kWideTile][kWideTile + 8];
    constexpr int kChunks = kWideTile / 8;            // 8-value chunks across a tile row
    constexpr int kRowsPerPass = kThreads / kChunks;  // 32
    const int chunk = threadIdx.x % kChunks, lane_row = threadIdx.x / kChunks;
    const int64_t tile_cols = (cols + kWideTile - 1) / kWideTile;
    const int64_t tiles = tile_cols * ((rows + kWideTile - 1) / kWideTile);
    const bool count = counts != nullptr;
    CastTally t;
    for (int64_t i = blockIdx.x; i < tiles; i += gridDim.x) {
        const int64_t r0 = (i / tile_cols) * kWideTile, c0 = (i % tile_cols) * kWideTile;
#pragma unroll
        for (int pass = 0; pass < kWideTile / kRowsPerPass; ++pass) {
            const int tr = lane_row + pass * kRowsPerPass;
            const int64_t r = r0 + tr, c = c0 + chunk * 8;
            if (r < rows && c < cols) {
                float v[8];
                load8(in + r * cols + c, v);
                uint2 packed;
                unsigned char* bytes = reinterpret_cast<unsigned char*>(&packed);
#pragma unroll
                for (int k = 0; k < 8; ++k) {
                    bytes[k] = t.take(v[k], s, largest, smallest, smallest_normal, format, count);
                    tile[tr][chunk * 8 + k] = bytes[k];
                }
                *reinterpret_cast<uint2*>(out + r * cols + c) = packed;
            }
        }
        __syncthreads();
#pragma unroll
        for (int pass = 0; pass < kWideTile / kRowsPerPass; ++pass) {
            const int tc = lane_row + pass * kRowsPerPass;  // a row of the transpose
            const int64_t c = c0 + tc, r = r0 + chunk * 8;
            if (c < cols && r < rows) {
                uint2 packed;
                unsigned char* bytes = reinterpret_cast<unsigned char*>(&packed);
#pragma unroll
                for (int k = 0; k < 8; ++k) {
                    bytes[k] = tile[chunk * 8 + k][tc];
                }
                *reinterpret_cast<uint2*>(out_t + c * rows + r) = packed;
            }
        }
        __syncthreads();
    }
    t.publish(amax_out, counts);
}

template <typename T>
__global__ void amaxKernel(const T* __restrict__ in, int64_t n, float* amax_out) {
    int bits = 0;
    const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
    for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
         i += stride) {
        bits = max(bits, magnitudeBits(toFloat(in[i])));
    }
    bits = blockMax(bits);
    if (threadIdx.x == 0) {
        atomicMax(reinterpret_cast<int*>(amax_out), bits);
    }
}

__global__ void pushKernel(float* history, int length, float* amax, float* scale, float largest,
                           float margin_factor) {
    for (int i = length - 1; i > 0; --i) {
        history[i] = history[i - 1];
    }
    history[0] = *amax;
    float m = 0.f;
    for (int i = 0; i < length; ++i) {
        const float h = history[i];
        m = h < INFINITY && h > m ? h : m;  // finite entries only (NaN compares false)
    }
    if (m > 0.f) {
        *scale = fminf(largest / margin_factor / m, FLT_MAX);
    }
    *amax = 0.f;
}

int blocksFor(int64_t n) {
    int device = 0, sms = 0;
    cudaGetDevice(&device);
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
    const int64_t wanted = (n + kThreads - 1) / kThreads;
    return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(wanted, int64_t{sms} * 8)));
}

void check(const char* what) {
    const cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) {
        throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
    }
}

}  // namespace

void castTransposeToFp8(const void* in, Element element, int64_t rows, int64_t cols, void* out,
                        void* out_t, Fp8Format format, const float* scale, const float* amax_in,
                        float margin_factor, float* inv_scale, float* amax_out,
                        unsigned long long* counts, void* stream) {
    const auto st = static_cast<cudaStream_t>(stream);
    const auto interp = format == Fp8Format::E4m3 ? __NV_E4M3 : __NV_E5M2;
    const float largest = format == Fp8Format::E4m3 ? 448.f : 57344.f;
    const float smallest = format == Fp8Format::E4m3 ? 0.001953125f : 1.52587890625e-05f;
    const float smallest_normal = format == Fp8Format::E4m3 ? 0.015625f : 6.103515625e-05f;
    auto* o = static_cast<unsigned char*>(out);
    auto* ot = static_cast<unsigned char*>(out_t);
    // Whole 8-value chunks, 16-byte loads: the wide kernel; else one value at a time.
    const bool wide = rows % 8 == 0 && cols % 8 == 0 && reinterpret_cast<uintptr_t>(in) % 16 == 0;
    const int tile = wide ? kWideTile : kTile;
    const int64_t tiles = ((rows + tile - 1) / tile) * ((cols + tile - 1) / tile);
    const int blocks = blocksFor(tiles * kThreads);
#define AMPBENCH_CAST(T)                                                                  \
    if (wide) {                                                                           \
        castTransposeWideKernel<<<blocks, kThreads, 0, st>>>(                             \
            static_cast<const T*>(in), rows, cols, o, ot, interp, largest, smallest,      \
            smallest_normal, scale, amax_in, margin_factor, inv_scale, amax_out, counts); \
    } else {                                                                              \
        castTransposeKernel<<<blocks, kThreads, 0, st>>>(                                 \
            static_cast<const T*>(in), rows, cols, o, ot, interp, largest, smallest,      \
            smallest_normal, scale, amax_in, margin_factor, inv_scale, amax_out, counts); \
    }
    switch (element) {
        case Element::Float:
            AMPBENCH_CAST(float)
            break;
        case Element::Half:
            AMPBENCH_CAST(__half)
            break;
        case Element::BFloat16:
            AMPBENCH_CAST(__nv_bfloat16)
            break;
    }
#undef AMPBENCH_CAST
    check("the FP8 cast and transpose");
}

void amaxOf(const void* in, Element element, int64_t n, float* amax_out, void* stream) {
    const auto s = static_cast<cudaStream_t>(stream);
    cudaMemsetAsync(amax_out, 0, sizeof(float), s);
    const int blocks = blocksFor(n);
    switch (element) {
        case Element::Float:
            amaxKernel<<<blocks, kThreads, 0, s>>>(static_cast<const float*>(in), n, amax_out);
            break;
        case Element::Half:
            amaxKernel<<<blocks, kThreads, 0, s>>>(static_cast<const __half*>(in), n, amax_out);
            break;
        case Element::BFloat16:
            amaxKernel<<<blocks, kThreads, 0, s>>>(static_cast<const __nv_bfloat16*>(in), n,
                                                   amax_out);
            break;
    }
    check("the FP8 amax");
}

void pushAmax(float* history, int length, float* amax, float* scale, float largest,
              float margin_factor, void* stream) {
    pushKernel<<<1, 1, 0, static_cast<cudaStream_t>(stream)>>>(history, length, amax, scale,
                                                               largest, margin_factor);
    check("the FP8 scale update");
}

}  // namespace ampbench::amp::cuda
