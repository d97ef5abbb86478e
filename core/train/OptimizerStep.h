#pragma once
#include <vector>

#include <ATen/core/Tensor.h>
#include <torch/optim/optimizer.h>

#include "core/amp/LossScaler.h"

namespace ampbench::train {

struct OptimizerStepResult {
    at::Tensor grad_norm;  ///< global L2 norm of the unscaled gradients (undefined if not asked)
    bool skipped = false;  ///< inf/NaN gradients: the optimizer did not step
};

/// The end of one optimizer step, after the last backward of its K micro-batches,
/// in the order PyTorch's recipe requires: unscale (when a scaler is given), then
/// the gradient norm and clipping on unscaled gradients, then step unless a
/// gradient is inf/NaN, then the scaler's update, then gradients set to none.
OptimizerStepResult finishOptimizerStep(const std::vector<at::Tensor>& params,
                                        torch::optim::Optimizer& optimizer, amp::LossScaler* scaler,
                                        double grad_clip, bool want_norm);

}  // namespace ampbench::train
