#pragma once
#include <vector>

#include <ATen/core/Tensor.h>

#include "core/amp/LossScaler.h"
#include "core/train/private/ParameterUpdater.h"

namespace ampbench::parallel {
class GradientSync;
}

namespace ampbench::train {

struct OptimizerStepResult {
    at::Tensor grad_norm;  ///< global L2 norm of the unscaled gradients (undefined if not asked)
    /// With `defer_norm` and no clipping: each gradient's L2 norm instead of grad_norm;
    /// the global norm is their norm, computed later for many steps at once (one
    /// LibTorch call per step instead of three matters on launch-bound models).
    std::vector<at::Tensor> grad_norm_parts;
    /// When the updater skips on the device: a copy of found_inf to read later
    /// (no host synchronisation now). Undefined otherwise.
    at::Tensor found_inf;
    bool skipped = false;     ///< known on the host (updaters that do not skip on the device)
    double norm_host_ms = 0;  ///< host time spent launching the gradient norm (when asked)
};

/// The end of one optimizer step, after the last backward of its K micro-batches,
/// in the order PyTorch's recipe requires: unscale (when a scaler is given), then
/// the gradient norm and clipping on unscaled gradients, then the update unless a
/// gradient is inf/NaN, then the scaler's update, then gradients set to none.
/// Data-parallel (`sync`): the gradients are averaged over the ranks first (with
/// `step_loss`, which then holds the global batch's loss), and the found-inf flag is
/// agreed after unscaling, so every rank skips or steps together.
OptimizerStepResult finishOptimizerStep(const std::vector<at::Tensor>& params,
                                        ParameterUpdater& updater, amp::LossScaler* scaler,
                                        double grad_clip, bool want_norm, bool defer_norm = false,
                                        parallel::GradientSync* sync = nullptr,
                                        at::Tensor* step_loss = nullptr);

}  // namespace ampbench::train
