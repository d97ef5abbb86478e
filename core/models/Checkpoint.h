#pragma once
#include <functional>

#include <ATen/core/Tensor.h>

namespace ampbench::models {

using BlockFunction = std::function<at::Tensor(const at::Tensor&)>;

/// Gradient checkpointing of one block: runs `block` without keeping its
/// activations, and runs it again in backward to get them. The CPU and CUDA
/// random-number states and the autocast state of the forward pass are restored
/// for the recomputation, so dropout masks and precisions match. Under autograd
/// only; with grad mode off it is just `block(x)`.
at::Tensor checkpoint(const BlockFunction& block, const at::Tensor& x);

/// Blocks recomputed in backward so far in this process (for tests and checks).
int64_t checkpointRecomputations();

}  // namespace ampbench::models
