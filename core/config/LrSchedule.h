#pragma once
// The learning rate of an optimizer step under the spec's schedule. A function of
// the step's index among the arm's planned optimizer steps, so an arm with
// accumulation K (a quarter of the steps for K = 4) follows the same curve over
// samples seen. A step the loss scaler skips still advances the schedule, as
// PyTorch's scheduler.step() does when it is called every iteration.
#include <cstdint>

#include "core/config/ExperimentSpec.h"

namespace ampbench::config {

/// `lr` at 0-based optimizer step `step` of `total`.
/// - constant: lr;
/// - warmup: linear from lr / W to lr over the first W = warmup_fraction · total
///   steps, then lr;
/// - cosine: that warm-up, then a half cosine from lr to min_lr_fraction · lr;
/// - step: that warm-up, then lr · gamma^⌊progress / step_fraction⌋;
/// - onecycle: PyTorch's OneCycleLR (anneal cos, div_factor 25, final_div_factor 1e4,
///   pct_start = warmup_fraction, or 0.3 when it is 0; the momentum is not cycled).
double scheduledLr(const OptimizerSpec& o, double lr, int64_t step, int64_t total);

}  // namespace ampbench::config
