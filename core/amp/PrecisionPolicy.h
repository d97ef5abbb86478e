#pragma once
// One arm's precision in one place: what autocast casts to, and for fp16 the loss
// scaler. The training step calls its hooks: the forward context, the backward of
// a micro-batch's loss, and the scaler that finishOptimizerStep uses to unscale,
// skip and update.
#include <ATen/ATen.h>

#include <memory>
#include <string>

#include "core/amp/AutocastGuard.h"
#include "core/amp/LossScaler.h"
#include "core/config/ExperimentSpec.h"

namespace ampbench::amp {

class PrecisionPolicy {
  public:
    /// `precision` is resolved (never amp). fp16 gets a loss scaler with `scaler`'s
    /// settings on `device`; fp8 runs under bf16 autocast (its Linear layers are
    /// Fp8Linears, which the trainer sets on the model).
    PrecisionPolicy(config::Precision precision, const config::ScalerSpec& scaler,
                    c10::Device device, bool loss_scaling = true);

    config::Precision precision() const { return precision_; }
    bool autocast() const { return autocast_; }
    at::ScalarType dtype() const { return dtype_; }
    /// Empty when this LibTorch can autocast to the dtype on the device; else why not.
    std::string unsupported() const;
    /// pure-fp16: the model's floating-point parameters and buffers are half, and so
    /// are its floating-point inputs.
    bool halfModel() const { return precision_ == config::Precision::PureFp16; }
    /// Casts the model (halfModel) in place; integer buffers stay as they are.
    void prepareModel(const std::vector<at::Tensor>& parameters,
                      const std::vector<at::Tensor>& buffers) const;
    /// The input as the model takes it (half for halfModel).
    at::Tensor input(const at::Tensor& x) const;

    /// Runs `forward` under the arm's autocast. `cache` off for no-grad passes and
    /// graph capture (LibTorch 1.13 loses grad_fn through the cast cache otherwise).
    template <class F>
    auto forward(F&& forward, bool cache = true) const {
        AutocastGuard guard(device_type_, dtype_, autocast_, cache);
        return forward();
    }
    /// Backward of one micro-batch's loss: divided by the K micro-batches of the
    /// step, scaled when fp16. Runs outside the autocast region.
    void backward(const at::Tensor& loss, int accumulation) const;

    /// The scaler, for finishOptimizerStep; null unless fp16.
    LossScaler* scaler() const { return scaler_.get(); }
    /// A copy of the scale this step's backward uses (undefined without a scaler).
    at::Tensor scaleInUse() const;
    /// "ATen's fused kernels" or "portable tensor ops"; empty without a scaler.
    std::string scalerKind() const;

  private:
    config::Precision precision_;
    bool autocast_;
    at::ScalarType dtype_;
    c10::DeviceType device_type_;
    c10::Device device_;
    std::unique_ptr<LossScaler> scaler_;
};

}  // namespace ampbench::amp
