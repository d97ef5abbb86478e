#pragma once
#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <vector>

#include "core/config/ExperimentSpec.h"

namespace ampbench::amp {

/// Dynamic loss scaling with the semantics of PyTorch's torch.amp.GradScaler.
/// State (scale: float32, growth tracker: int32, found_inf: float32) lives in
/// 1-element tensors on the gradients' device; its settings are the arm's
/// config::ScalerSpec as it is. Uses ATen's fused kernels
/// (_amp_foreach_non_finite_check_and_unscale_, _amp_update_scale_) where this
/// LibTorch has them for the device, and the same arithmetic in plain tensor ops
/// elsewhere (LibTorch 1.13 on CPU). Per optimizer step:
///   scale(loss).backward() ×K;  unscale(grads);  [clip];  if (!foundInf()) step;  update();
class LossScaler {
  public:
    LossScaler(const config::ScalerSpec& options, c10::Device device, bool force_portable = false);

    at::Tensor scale(const at::Tensor& loss) const;
    /// Divides the gradients by the scale in place and records whether any is inf/NaN.
    /// Call once per optimizer step, after the last backward.
    void unscale(const std::vector<at::Tensor>& grads);
    /// Host read of found_inf (one synchronisation); the step must be skipped when true.
    bool foundInf() const;
    /// Backoff on inf, else count towards growth; resets found_inf for the next step.
    void update();

    double scaleValue() const;  ///< host read (synchronises)
    int growthTracker() const;  ///< host read (synchronises)
    const at::Tensor& scaleTensor() const { return scale_; }
    const at::Tensor& foundInfTensor() const { return found_inf_; }
    bool fused() const { return fused_; }
    const config::ScalerSpec& options() const { return options_; }

  private:
    config::ScalerSpec options_;
    bool fused_;
    at::Tensor scale_;
    at::Tensor tracker_;
    at::Tensor found_inf_;
};

/// Whether ATen's fused AMP kernels exist for this device in this LibTorch.
bool fusedScalerKernels(c10::Device device);

}  // namespace ampbench::amp
