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
#include <type_traits>

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

// The values of a cast: their FP8 bytes, their largest magnitude (as ordered bits of
// |v|: NaN's bits order above +inf's and are clamped to them when published), their
// counts where asked.
struct CastTally {
    int bits = 0;
    unsigned long long saturated = 0, flushed = 0, subnormal = 0, nonfinite = 0;

    __device__ __forceinline__ void tally(float v, float y, float largest, float smallest,
                                          float smallest_normal) {
        const float a = fabsf(y);
        const bool finite = fabsf(v) < INFINITY;
        saturated += finite && a > largest;
        flushed += a > 0.f && a < smallest;
        subnormal += a > 0.f && a < smallest_normal;
        nonfinite += !finite;
    }

    // v × s, NaN where v is not finite (an overflow upstream stays visible; finite
    // values saturate at the format's largest in the conversion).
    __device__ __forceinline__ float scaled(float v, float s) {
        bits = max(bits, __float_as_int(fabsf(v)));
        const float y = v * s;
        return fabsf(v) < INFINITY ? y : __int_as_float(0x7fc00000);
    }

    __device__ __forceinline__ unsigned char take(float v, float s, float largest, float smallest,
                                                  float smallest_normal,
                                                  __nv_fp8_interpretation_t format, bool count) {
        const float y = scaled(v, s);
        if (count) {
            tally(v, v * s, largest, smallest, smallest_normal);
        }
        return __nv_cvt_float_to_fp8(y, __NV_SATFINITE, format);
    }

    // Four values into four FP8 bytes, the first in the lowest byte.
    __device__ __forceinline__ uint32_t take4(const float (&v)[4], float s, float largest,
                                              float smallest, float smallest_normal,
                                              __nv_fp8_interpretation_t format, bool count) {
        float y[4];
#pragma unroll
        for (int k = 0; k < 4; ++k) {
            y[k] = scaled(v[k], s);
            if (count) {
                tally(v[k], v[k] * s, largest, smallest, smallest_normal);
            }
        }
        // The pair conversion puts .x in the low byte.
        const uint32_t a =
            __nv_cvt_float2_to_fp8x2(make_float2(y[0], y[1]), __NV_SATFINITE, format);
        const uint32_t b =
            __nv_cvt_float2_to_fp8x2(make_float2(y[2], y[3]), __NV_SATFINITE, format);
        return a | (b << 16);
    }

    // The block's tallies into amax_out and counts (every thread of the block calls it).
    __device__ __forceinline__ void publish(float* amax_out, unsigned long long* counts) {
        if (amax_out) {
            const int b = min(blockMax(bits), __float_as_int(INFINITY));
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

// The exact GELU as at::gelu computes it (approximate "none"), in float32.
__device__ __forceinline__ float gelu(float x) {
    return 0.5f * x * (1.f + erff(x * 0.70710678118654752440f));
}

template <Activation A>
__device__ __forceinline__ float activate(float x) {
    if constexpr (A == Activation::Gelu) {
        return gelu(x);
    } else {
        return x;
    }
}

// What every cast kernel takes besides its input, as plain values.
struct Args {
    int64_t rows = 0, cols = 0;
    unsigned char* out = nullptr;
    unsigned char* out_t = nullptr;
    __nv_fp8_interpretation_t format = __NV_E4M3;
    float largest = 0, smallest = 0, smallest_normal = 0;
    const float* scale = nullptr;
    const float* amax_in = nullptr;
    float margin_factor = 1.f;
    float* inv_scale = nullptr;
    float* amax_out = nullptr;
    unsigned long long* counts = nullptr;
    float* partials = nullptr;
    ScalingState state;
    RowNorm norm;
};

__device__ __forceinline__ float castScale(const Args& a) {
    const float s = a.scale ? *a.scale : scaleFrom(*a.amax_in, a.largest / a.margin_factor);
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        *a.inv_scale = 1.f / s;
    }
    return s;
}

// The scaling state's update, by the cast's last block once every block has taken
// its amax in (so no one-thread kernel follows each cast). Every block reads the
// scale before it finishes, so the last one may replace it.
__device__ __forceinline__ void finishCast(const ScalingState& st, float room) {
    if (st.history == nullptr) {
        return;
    }
    __shared__ bool last;
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence();  // this block's amax is seen before its count
        last = atomicAdd(st.done, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (!last || threadIdx.x != 0) {
        return;
    }
    __threadfence();
    const float amax = *static_cast<volatile float*>(st.amax);
    for (int i = st.length - 1; i > 0; --i) {
        st.history[i] = st.history[i - 1];
    }
    st.history[0] = amax;
    float m = 0.f;
    for (int i = 0; i < st.length; ++i) {
        const float h = st.history[i];
        m = h < INFINITY && h > m ? h : m;  // finite entries only (NaN compares false)
    }
    if (m > 0.f) {
        *st.scale = fminf(room / m, FLT_MAX);
    }
    *st.amax = 0.f;
    *st.done = 0u;
}

constexpr int kTile = 32;  // a kTile × kTile tile per step, 256 threads: 8 rows at a time

template <typename T, Activation A>
__global__ void castTransposeKernel(const T* __restrict__ in, Args a) {
    const float s = castScale(a);
    __shared__ unsigned char tile[kTile][kTile + 4];
    constexpr int kRowsPerPass = kThreads / kTile;
    __shared__ float sums[kRowsPerPass][kTile];
    const int tx = threadIdx.x % kTile, ty = threadIdx.x / kTile;
    const int64_t rows = a.rows, cols = a.cols;
    const int64_t tile_cols = (cols + kTile - 1) / kTile;
    const int64_t tiles = tile_cols * ((rows + kTile - 1) / kTile);
    const bool count = a.counts != nullptr;
    CastTally t;
    for (int64_t i = blockIdx.x; i < tiles; i += gridDim.x) {
        const int64_t r0 = (i / tile_cols) * kTile, c0 = (i % tile_cols) * kTile;
        float column = 0.f;
        for (int k = ty; k < kTile; k += kRowsPerPass) {
            const int64_t r = r0 + k, c = c0 + tx;
            if (r < rows && c < cols) {
                const float v = activate<A>(toFloat(in[r * cols + c]));
                column += v;
                const unsigned char q =
                    t.take(v, s, a.largest, a.smallest, a.smallest_normal, a.format, count);
                a.out[r * cols + c] = q;
                tile[k][tx] = q;
            }
        }
        sums[ty][tx] = column;
        __syncthreads();
        for (int k = ty; k < kTile; k += kRowsPerPass) {
            const int64_t c = c0 + k, r = r0 + tx;  // row c of the transpose, column r
            if (c < cols && r < rows) {
                a.out_t[c * rows + r] = tile[tx][k];
            }
        }
        if (a.partials && ty == 0 && c0 + tx < cols) {
            float total = 0.f;
            for (int k = 0; k < kRowsPerPass; ++k) {
                total += sums[k][tx];
            }
            a.partials[(r0 / kTile) * cols + c0 + tx] = total;
        }
        __syncthreads();
    }
    t.publish(a.amax_out, a.counts);
    finishCast(a.state, a.largest / a.margin_factor);
}

// Eight consecutive values from 16-byte-aligned storage, held as loaded (16 bytes of
// a 2-byte type, 32 of float) and read as floats.
template <typename T>
struct Eight {
    uint4 raw;
    __device__ __forceinline__ void load(const T* p) { raw = *reinterpret_cast<const uint4*>(p); }
    __device__ __forceinline__ float operator[](int k) const {
        return toFloat(reinterpret_cast<const T*>(&raw)[k]);
    }
};
template <>
struct Eight<float> {
    float4 lo, hi;
    __device__ __forceinline__ void load(const float* p) {
        lo = reinterpret_cast<const float4*>(p)[0];
        hi = reinterpret_cast<const float4*>(p)[1];
    }
    __device__ __forceinline__ float operator[](int k) const {
        const float4& h = k < 4 ? lo : hi;
        switch (k & 3) {
            case 0:
                return h.x;
            case 1:
                return h.y;
            case 2:
                return h.z;
            default:
                return h.w;
        }
    }
};

// The rows w0..w3 of a 4 × 4 block of bytes (byte j of w_i: row i, column j) as its
// columns (byte i of c_j: row i of column j).
__device__ __forceinline__ void transpose4x4(uint32_t w0, uint32_t w1, uint32_t w2, uint32_t w3,
                                             uint32_t& c0, uint32_t& c1, uint32_t& c2,
                                             uint32_t& c3) {
    const uint32_t t0 = __byte_perm(w0, w1, 0x5140);  // w0.0 w1.0 w0.1 w1.1
    const uint32_t t1 = __byte_perm(w0, w1, 0x7362);  // w0.2 w1.2 w0.3 w1.3
    const uint32_t t2 = __byte_perm(w2, w3, 0x5140);
    const uint32_t t3 = __byte_perm(w2, w3, 0x7362);
    c0 = __byte_perm(t0, t2, 0x5410);  // w0.0 w1.0 w2.0 w3.0
    c1 = __byte_perm(t0, t2, 0x7632);
    c2 = __byte_perm(t1, t3, 0x5410);
    c3 = __byte_perm(t1, t3, 0x7632);
}

// A block's tile: 64 rows × 256 columns, its 8 warps 2 down × 4 across, each warp 32
// rows × 64 columns as 4 groups of 8 rows × 8 lanes of 8 columns, so each thread
// casts an 8 × 8 block and transposes it in its registers. Every access is whole
// 32-byte sectors: a row's 8 lanes load 128 contiguous bytes (bf16) and store 64; the
// transpose's 4 row groups store 32 contiguous bytes of each transposed row.
constexpr int kBlockRows = 64, kBlockCols = 256;

// The cast and transpose with 16-byte loads, 8-byte stores and no shared memory for
// the transpose: rows and cols multiples of 8, the input 16-byte aligned.
// Three blocks a multiprocessor where the input is 2 bytes a value (at most 85
// registers: the GELU took 92, two blocks); float32's 8 × 8 values take two.
template <typename T, Activation A>
__global__ void __launch_bounds__(kThreads, sizeof(T) == 4 ? 2 : 3)
    castTransposeBlockKernel(const T* __restrict__ in, Args a) {
    const float s = castScale(a);
    __shared__ float sums[kBlockRows / 32][kBlockCols];  // per warp row: its columns' sums
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int group = lane / 8, chunk = lane % 8;  // the thread's 8 rows and 8 columns
    const int warp_row = warp / 4, warp_col = warp % 4;
    const int tile_col = warp_col * 64 + chunk * 8;
    const int64_t rows = a.rows, cols = a.cols;
    const int64_t tile_cols = (cols + kBlockCols - 1) / kBlockCols;
    const int64_t tiles = tile_cols * ((rows + kBlockRows - 1) / kBlockRows);
    const bool count = a.counts != nullptr;
    CastTally t;
    for (int64_t i = blockIdx.x; i < tiles; i += gridDim.x) {
        const int64_t r0 = (i / tile_cols) * kBlockRows, c0 = (i % tile_cols) * kBlockCols;
        const int64_t r = r0 + warp_row * 32 + group * 8, c = c0 + tile_col;
        float column[8] = {0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f};
        if (r < rows && c < cols) {  // rows and cols multiples of 8: the whole 8 × 8 block
            Eight<T> v[8];
#pragma unroll
            for (int k = 0; k < 8; ++k) {
                v[k].load(in + (r + k) * cols + c);
            }
            uint32_t lo[8], hi[8];  // row k's bytes: columns 0-3 in lo[k], 4-7 in hi[k]
#pragma unroll
            for (int k = 0; k < 8; ++k) {
                float x[2][4];
                float mean = 0.f, rstd = 1.f;
                if constexpr (A == Activation::LayerNorm) {
                    mean = __ldg(a.norm.mean + r + k);
                    rstd = __ldg(a.norm.rstd + r + k);
                }
#pragma unroll
                for (int j = 0; j < 8; ++j) {
                    if constexpr (A == Activation::LayerNorm) {
                        // As at::layer_norm: (x - mean) · rstd, then gamma and beta.
                        x[j / 4][j % 4] = (v[k][j] - mean) * rstd * __ldg(a.norm.gamma + c + j) +
                                          __ldg(a.norm.beta + c + j);
                    } else {
                        x[j / 4][j % 4] = activate<A>(v[k][j]);
                    }
                    column[j] += x[j / 4][j % 4];
                }
                lo[k] = t.take4(x[0], s, a.largest, a.smallest, a.smallest_normal, a.format, count);
                hi[k] = t.take4(x[1], s, a.largest, a.smallest, a.smallest_normal, a.format, count);
                *reinterpret_cast<uint2*>(a.out + (r + k) * cols + c) = make_uint2(lo[k], hi[k]);
            }
            uint32_t up[8], down[8];  // column j's bytes: rows 0-3 in up[j], 4-7 in down[j]
            transpose4x4(lo[0], lo[1], lo[2], lo[3], up[0], up[1], up[2], up[3]);
            transpose4x4(lo[4], lo[5], lo[6], lo[7], down[0], down[1], down[2], down[3]);
            transpose4x4(hi[0], hi[1], hi[2], hi[3], up[4], up[5], up[6], up[7]);
            transpose4x4(hi[4], hi[5], hi[6], hi[7], down[4], down[5], down[6], down[7]);
#pragma unroll
            for (int j = 0; j < 8; ++j) {
                *reinterpret_cast<uint2*>(a.out_t + (c + j) * rows + r) =
                    make_uint2(up[j], down[j]);
            }
        }
        if (a.partials) {
            // The 4 row groups of a column chunk, added in one fixed order, then the two
            // warp rows: the same sums on every run.
#pragma unroll
            for (int j = 0; j < 8; ++j) {
                column[j] += __shfl_xor_sync(0xffffffffu, column[j], 8);
                column[j] += __shfl_xor_sync(0xffffffffu, column[j], 16);
            }
            if (group == 0) {
#pragma unroll
                for (int j = 0; j < 8; ++j) {
                    sums[warp_row][tile_col + j] = column[j];
                }
            }
            __syncthreads();
            const int64_t col = c0 + threadIdx.x;  // kThreads == kBlockCols
            if (col < cols) {
                a.partials[(r0 / kBlockRows) * cols + col] =
                    sums[0][threadIdx.x] + sums[1][threadIdx.x];
            }
            __syncthreads();
        }
    }
    t.publish(a.amax_out, a.counts);
    finishCast(a.state, a.largest / a.margin_factor);
}
static_assert(kThreads == kBlockCols && kThreads == 8 * 32, "one thread a tile column, 8 warps");

template <typename T, Activation A>
__global__ void amaxKernel(const T* __restrict__ in, int64_t n, float* amax_out) {
    int bits = 0;
    const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
    for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
         i += stride) {
        bits = max(bits, magnitudeBits(activate<A>(toFloat(in[i]))));
    }
    bits = blockMax(bits);
    if (threadIdx.x == 0) {
        atomicMax(reinterpret_cast<int*>(amax_out), bits);
    }
}

int multiprocessors() {
    int device = 0, sms = 0;
    cudaGetDevice(&device);
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
    return std::max(1, sms);
}

int blocksFor(int64_t n) {
    const int64_t wanted = (n + kThreads - 1) / kThreads;
    return static_cast<int>(
        std::max<int64_t>(1, std::min<int64_t>(wanted, int64_t{multiprocessors()} * 8)));
}

void check(const char* what) {
    cuda_device::throwIfFailed(cudaGetLastError(), what);
}

template <typename T, Activation A>
void launchCastAs(const T* in, bool wide, int blocks, const Args& a, cudaStream_t st) {
    if (wide) {
        castTransposeBlockKernel<T, A><<<blocks, kThreads, 0, st>>>(in, a);
    } else {
        castTransposeKernel<T, A><<<blocks, kThreads, 0, st>>>(in, a);
    }
}

template <typename T>
void launchCast(const void* in, Activation act, bool wide, int blocks, const Args& a,
                cudaStream_t st) {
    const T* typed = static_cast<const T*>(in);
    if (act == Activation::LayerNorm) {
        if constexpr (std::is_same_v<T, float>) {
            castTransposeBlockKernel<float, Activation::LayerNorm>
                <<<blocks, kThreads, 0, st>>>(typed, a);
        } else {
            throw std::invalid_argument("the FP8 cast normalises float32 input only");
        }
    } else if (act == Activation::Gelu) {
        launchCastAs<T, Activation::Gelu>(typed, wide, blocks, a, st);
    } else {
        launchCastAs<T, Activation::None>(typed, wide, blocks, a, st);
    }
}

template <typename T>
void launchAmax(const void* in, int64_t n, Activation act, float* amax_out, cudaStream_t st) {
    const T* typed = static_cast<const T*>(in);
    const int blocks = blocksFor(n);
    if (act == Activation::Gelu) {
        amaxKernel<T, Activation::Gelu><<<blocks, kThreads, 0, st>>>(typed, n, amax_out);
    } else {
        amaxKernel<T, Activation::None><<<blocks, kThreads, 0, st>>>(typed, n, amax_out);
    }
}

}  // namespace

int64_t castPartialRows(int64_t rows) {
    return (rows + kTile - 1) / kTile;  // the narrower tiles': the most rows
}

bool castCanNormalize(const CastJob& job) {
    return job.element == Element::Float && job.rows % 8 == 0 && job.cols % 8 == 0 &&
           reinterpret_cast<uintptr_t>(job.in) % 16 == 0 && job.scale != nullptr &&
           job.amax_in == nullptr && job.norm.mean && job.norm.rstd && job.norm.gamma &&
           job.norm.beta;
}

int64_t castTransposeToFp8(const CastJob& job, void* stream) {
    if (job.activation == Activation::LayerNorm && !castCanNormalize(job)) {
        throw std::invalid_argument(
            "the FP8 cast with a LayerNorm needs float32 rows and columns in multiples of 8, "
            "16-byte aligned, its statistics and a scale from the history");
    }
    const auto st = static_cast<cudaStream_t>(stream);
    const bool e4m3 = job.format == Fp8Format::E4m3;
    Args a;
    a.rows = job.rows;
    a.cols = job.cols;
    a.out = static_cast<unsigned char*>(job.out);
    a.out_t = static_cast<unsigned char*>(job.out_t);
    a.format = e4m3 ? __NV_E4M3 : __NV_E5M2;
    a.largest = e4m3 ? 448.f : 57344.f;
    a.smallest = e4m3 ? 0.001953125f : 1.52587890625e-05f;
    a.smallest_normal = e4m3 ? 0.015625f : 6.103515625e-05f;
    a.scale = job.scale;
    a.amax_in = job.amax_in;
    a.margin_factor = job.margin_factor;
    a.inv_scale = job.inv_scale;
    a.amax_out = job.amax_out;
    a.counts = job.counts;
    a.partials = job.column_partials;
    a.state = job.state;
    a.norm = job.norm;
    // Whole 8-value chunks, 16-byte loads: the wide kernel; else one value at a time.
    const bool wide =
        job.rows % 8 == 0 && job.cols % 8 == 0 && reinterpret_cast<uintptr_t>(job.in) % 16 == 0;
    const int64_t tile_rows =
        wide ? (job.rows + kBlockRows - 1) / kBlockRows : (job.rows + kTile - 1) / kTile;
    const int64_t tiles = tile_rows * (wide ? (job.cols + kBlockCols - 1) / kBlockCols
                                            : (job.cols + kTile - 1) / kTile);
    // As many blocks as tiles up to 16 a multiprocessor, the tiles shared evenly (a
    // block's amax and count are one atomic each; a second round of a few tiles would
    // leave most of the GPU idle).
    const int64_t cap = int64_t{multiprocessors()} * 16;
    const int64_t per_block = (tiles + cap - 1) / cap;
    const int blocks = static_cast<int>(std::max<int64_t>(1, (tiles + per_block - 1) / per_block));
    switch (job.element) {
        case Element::Float:
            launchCast<float>(job.in, job.activation, wide, blocks, a, st);
            break;
        case Element::Half:
            launchCast<__half>(job.in, job.activation, wide, blocks, a, st);
            break;
        case Element::BFloat16:
            launchCast<__nv_bfloat16>(job.in, job.activation, wide, blocks, a, st);
            break;
    }
    check("the FP8 cast and transpose");
    return job.column_partials ? tile_rows : 0;
}

void amaxOf(const void* in, Element element, int64_t n, Activation activation, float* amax_out,
            void* stream) {
    const auto st = static_cast<cudaStream_t>(stream);
    cudaMemsetAsync(amax_out, 0, sizeof(float), st);
    switch (element) {
        case Element::Float:
            launchAmax<float>(in, n, activation, amax_out, st);
            break;
        case Element::Half:
            launchAmax<__half>(in, n, activation, amax_out, st);
            break;
        case Element::BFloat16:
            launchAmax<__nv_bfloat16>(in, n, activation, amax_out, st);
            break;
    }
    check("the FP8 amax");
}

}  // namespace ampbench::amp::cuda
