#pragma once
// The arithmetic of FP8 per-tensor scaling, in ATen operations on any device: the
// reference the fused CUDA casts (Fp8Cuda.cu) follow and the CPU tests check.
//
// A tensor x is cast as saturate(x × scale) and decoded as q × (1 / scale). The scale
// puts the largest |value| the recipe expects at the format's largest finite value,
// 2^margin below it: scale = largest / amax / 2^margin. Delayed scaling takes amax
// as the largest of the last `history` casts' (Transformer Engine's DelayedScaling
// with amax_compute_algo "max"); current scaling takes this tensor's own.
#include <ATen/core/Tensor.h>

#include <c10/core/Device.h>

namespace ampbench::amp {

/// The largest finite values of the two FP8 formats (e4m3 as PyTorch's
/// float8_e4m3fn: no infinities, so 448 rather than 240).
inline constexpr double kE4m3Max = 448.0;
inline constexpr double kE5m2Max = 57344.0;

/// `largest / amax / 2^margin` where amax is finite and positive, else `previous`;
/// at most the largest finite float (so a tiny amax cannot make it infinite).
/// One-element float32 tensors; no host read.
at::Tensor scaleFromAmax(const at::Tensor& amax, const at::Tensor& previous, double largest,
                         int margin);

/// One tensor's scaling state, on the device.
struct Fp8Scaling {
    at::Tensor history;  ///< [H] float32: the last casts' amax, newest first
    at::Tensor scale;    ///< [1] float32: what the next cast multiplies by
    at::Tensor amax;     ///< [1] float32: the largest |value| of the cast in progress
    /// [1] int32: the blocks of the cast in progress that finished; the fused cast's
    /// last block updates the history and the scale (Fp8Cuda.h) and zeroes it.
    at::Tensor done;
    double largest = kE4m3Max;
    int margin = 0;
    /// Whether a cast has been seen: the first cast of a delayed tensor scales from
    /// its own amax, as a current one does (a history of zeros says nothing).
    bool primed = false;

    static Fp8Scaling make(int history, double largest, int margin, c10::Device device);
    /// After a cast whose amax is in `amax`: rolls the history one place, puts amax
    /// first, sets the scale from the history's largest finite entry (the previous
    /// scale where there is none), zeroes amax. In place; no host read.
    void push();
};

/// What saturate(x × scale) keeps, in float32: x × scale clamped to ±largest, with
/// non-finite values NaN (so an overflow upstream stays visible), rounded to the
/// format's grid by a float8 dtype where this LibTorch has one, else left unrounded.
at::Tensor scaledForCast(const at::Tensor& x, const at::Tensor& scale, double largest);

}  // namespace ampbench::amp
