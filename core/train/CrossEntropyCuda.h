#pragma once
// Cross-entropy over half-precision logits on the GPU, in float32 arithmetic, without a
// float32 copy of the logits. Autocast runs the loss in float32: for a decoder's
// [B·T, V] logits (16,384 × 50,257 at GPT-2's shapes, 1.6 GB in bf16) that is a 3.3 GB
// copy, a 3.3 GB log-softmax, a 3.3 GB gradient and its copy back, about 25 GB of
// traffic a step. Here the forward reads the logits once (each row's running max and
// sum of exponentials) and the backward reads them once and writes the gradient in
// their own dtype. Compiled only where LibTorch has CUDA; plain types here.
#include <cstdint>

namespace ampbench::train::cuda {

enum class Logits { Half, BFloat16 };

/// For each of `rows` rows of `cols` logits (row r at logits + r · row_stride
/// elements): lse[r] = log Σ exp(x), loss[r] = lse[r] - x[target[r]], both 0 where
/// target[r] == ignore_index; NaN where the target is outside [0, cols) or the row
/// holds NaN or +inf.
void crossEntropyForward(const void* logits, Logits dtype, int64_t rows, int64_t cols,
                         int64_t row_stride, const int64_t* target, int64_t ignore_index,
                         float* loss, float* lse, void* stream);

/// grad[r][c] = (exp(x - lse[r]) - [c == target[r]]) · *scale, in the logits' dtype
/// (contiguous, rows × cols); 0 for an ignored row. `scale` is a float32 on the device
/// (the loss's gradient over the count of targets, for a mean).
void crossEntropyBackward(const void* logits, Logits dtype, int64_t rows, int64_t cols,
                          int64_t row_stride, const int64_t* target, int64_t ignore_index,
                          const float* lse, const float* scale, void* grad, void* stream);

}  // namespace ampbench::train::cuda
