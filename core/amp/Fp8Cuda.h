#pragma once
// The fused FP8 casts on the GPU: one pass reads a tensor, scales, saturates and
// writes it in FP8 while taking its largest |value|; a second kernel of one thread
// keeps a delayed tensor's amax history and scale. Nothing is read back to the host.
// The arithmetic is Fp8Scaling.h's. Compiled only where LibTorch has CUDA; plain
// types here, so this header needs neither CUDA nor LibTorch.
#include <cstdint>

namespace ampbench::amp::cuda {

enum class Element { Float, Half, BFloat16 };
enum class Fp8Format { E4m3, E5m2 };

/// Per cast, optional: [finite values whose scaled |value| is over the format's
/// largest (saturated), non-zero values whose scaled |value| is below its smallest
/// subnormal (flushed), ... below its smallest normal, non-finite values]. Added
/// into; zero it first.
constexpr int kCastCounts = 4;

/// Queues on `stream` (a cudaStream_t of the current device) the cast of the
/// row-major `rows` × `cols` matrix at `in` into `out` (rows × cols bytes) and its
/// transpose into `out_t` (cols × rows, row-major), in one pass: out = saturate(in ×
/// s), non-finite values NaN. s is `*scale` where `scale` is set; else it is computed
/// from `*amax_in` as largest / amax / margin_factor (1 where amax is 0 or not
/// finite). Writes 1 / s to `*inv_scale`; with `amax_out`, takes the largest |in|
/// into it (atomically, so it must start at 0 or below the result; inf and NaN count
/// as +inf); with `counts`, adds into them. The scaled matmul takes its first
/// operand row-major and its second column-major, so a Linear layer's backward
/// needs both layouts of its input, weight and output gradient.
void castTransposeToFp8(const void* in, Element element, int64_t rows, int64_t cols, void* out,
                        void* out_t, Fp8Format format, const float* scale, const float* amax_in,
                        float margin_factor, float* inv_scale, float* amax_out,
                        unsigned long long* counts, void* stream);

/// Zeroes `*amax_out`, then takes the largest |in| into it.
void amaxOf(const void* in, Element element, int64_t n, float* amax_out, void* stream);

/// One thread: history[1..] = history[..-1], history[0] = *amax, then *scale =
/// largest / (largest finite entry) / margin_factor where that is positive (else
/// unchanged), then *amax = 0.
void pushAmax(float* history, int length, float* amax, float* scale, float largest,
              float margin_factor, void* stream);

}  // namespace ampbench::amp::cuda
