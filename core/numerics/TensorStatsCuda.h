#pragma once
// One pass over a tensor's values on the GPU for the number-format statistics
// (Fp16Numerics): exact zeros, values under two limits, finite values, the largest
// finite magnitude and finite values over a third limit, added into a slot of six
// 64-bit counters. Compiled only where
// LibTorch has CUDA; plain types here, so this header needs neither CUDA nor LibTorch.
#include <cstdint>

namespace ampbench::numerics::cuda {

enum class Element { Float, Half, BFloat16 };

/// The slot's layout: [zeros, |x| < below_subnormal, |x| < below_normal, finite,
/// bits of the largest finite |x| as a float, finite |x| > above_largest]. Zero it
/// before the first call.
constexpr int kSlotWidth = 6;

/// Queues the pass over `n` values stored densely at `data` (any order: the statistics
/// do not care) on `stream` (a cudaStream_t) of the current device, adding into `slot`
/// (device memory). NaN counts nowhere and is no magnitude; inf is not finite and is
/// the largest magnitude.
void accumulateStats(const void* data, Element element, int64_t n, float below_subnormal,
                     float below_normal, float above_largest, unsigned long long* slot,
                     void* stream);

}  // namespace ampbench::numerics::cuda
