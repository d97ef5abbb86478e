#pragma once
#include <memory>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include "core/config/ExperimentSpec.h"

namespace ampbench::train {

/// Applies the optimizer's update to the parameters from their gradients.
/// Two kinds: LibTorch's torch::optim classes (every LibTorch, every device; one
/// small kernel sequence per parameter), and ATen's fused multi-tensor kernels
/// (_fused_sgd_, _fused_adamw_: LibTorch 2.x on CUDA), which take the loss
/// scaler's found_inf on the device and skip the update there, so a step never
/// waits for the host to learn whether it was skipped.
class ParameterUpdater {
  public:
    virtual ~ParameterUpdater() = default;
    /// One update. `found_inf` (1-element float tensor, or undefined) is honoured
    /// on the device when skipsOnDevice(); otherwise the caller must not call
    /// step() for a step with inf/NaN gradients.
    virtual void step(const at::Tensor& found_inf) = 0;
    /// The learning rate of the next steps (the schedule's value for the step).
    virtual void setLr(double lr) = 0;
    virtual bool skipsOnDevice() const = 0;
    virtual std::string describe() const = 0;
};

/// The fused updater where this LibTorch and device have it (and `allow_fused`),
/// else LibTorch's optimizer. With `lr_on_device` the fused updater reads its learning
/// rate from a float32 tensor on the device, which setLr fills: a step captured as a
/// CUDA graph then follows the schedule on every replay (a number would be frozen into
/// the captured kernel's arguments).
std::unique_ptr<ParameterUpdater> makeUpdater(const std::vector<at::Tensor>& params,
                                              const config::OptimizerSpec& spec, double lr,
                                              c10::Device device, bool allow_fused = true,
                                              bool lr_on_device = false);

/// Whether fused optimizer kernels are available for the device in this build.
bool fusedUpdaterAvailable(c10::Device device);

}  // namespace ampbench::train
