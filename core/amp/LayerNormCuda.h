#pragma once
// A LayerNorm whose float32 input is written straight in half precision, and its
// backward from a half-precision gradient. Under autocast a LayerNorm computes and
// writes float32, and the Linear after it casts that to fp16/bf16: for a decoder's
// [B·T, d] rows a write and a read of 4 bytes a value and a cast kernel, at each of its
// LayerNorms, and the same again backward (the gradient cast to float32, the LayerNorm's
// backward reading it, a second pass for the weight and bias gradients). Here one kernel
// each way: forward reads x once and writes y in the Linear's dtype; backward reads the
// half gradient and x once, writes dx and per-block column sums for dgamma and dbeta.
// Compiled only where LibTorch has CUDA; plain types here.
#include <cstdint>

#include "core/amp/Fp8Cuda.h"

namespace ampbench::amp::cuda {

/// The widest row the backward keeps its column sums for in registers.
constexpr int64_t kLayerNormMaxCols = 2048;

/// For each of `rows` rows of the contiguous float32 `x` (`cols` wide, cols ≤
/// kLayerNormMaxCols): mean[r], rstd[r] = 1 / sqrt(biased variance + eps) and
/// y[r][c] = (x - mean) · rstd · gamma[c] + beta[c], rounded to `y_type` (Half or
/// BFloat16), all arithmetic in float32.
void layerNormToHalf(const float* x, int64_t rows, int64_t cols, const float* gamma,
                     const float* beta, double eps, Element y_type, void* y, float* mean,
                     float* rstd, void* stream);

/// Rows of `partials` layerNormFromHalfBackward writes for `rows` rows.
int64_t layerNormPartialRows(int64_t rows);

/// The backward of layerNormToHalf: with x̂ = (x - mean) · rstd and g = dy · gamma,
/// dx = rstd · (g - mean_c(g) - x̂ · mean_c(g · x̂)) in float32, and into
/// partials[p][0][c] and partials[p][1][c] (layerNormPartialRows(rows) × 2 × cols
/// float32) the sums of dy · x̂ and of dy over block p's rows, in a fixed order: their
/// sum over p is dgamma and dbeta.
void layerNormFromHalfBackward(const void* dy, Element dy_type, const float* x, const float* mean,
                               const float* rstd, const float* gamma, int64_t rows, int64_t cols,
                               float* dx, float* partials, void* stream);

}  // namespace ampbench::amp::cuda
