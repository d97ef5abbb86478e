#pragma once
// One arm's number format behind one interface: fp32, autocast fp16 (with the dynamic
// loss scaler) or bf16, pure fp16 (the negative control) and fp8, one class each
// (Precision.cpp). The trainer calls the same hooks for every format: readying the
// model, the input, the forward's autocast, the backward of a micro-batch's loss, the
// scaler that the optimizer step unscales and skips with, what the run's first events
// say, and the format's own per-layer records on a step whose numerics are recorded.
#include <ATen/ATen.h>

#include <memory>
#include <string>
#include <vector>

#include "core/amp/LossScaler.h"
#include "core/autocast/AutocastGuard.h"
#include "core/config/ExperimentSpec.h"
#include "core/models/Models.h"
#include "core/run/Numerics.h"

namespace ampbench::amp {

class Precision {
  public:
    virtual ~Precision() = default;
    /// The format of `arm` on `device`; `precision` is resolved (never amp). fp16
    /// autocast gets a loss scaler with the arm's settings unless loss scaling is off.
    /// `linear_rows`: the rows each Linear layer multiplies per micro-batch
    /// (amp::linearRows), which fp8 weighs its layers with (0: unknown).
    static std::unique_ptr<Precision> make(config::Precision precision, const config::ArmSpec& arm,
                                           c10::Device device, int64_t linear_rows = 0);

    config::Precision kind() const { return kind_; }
    bool autocast() const { return autocast_; }
    /// What autocast casts to (bf16 for fp32, unused: LibTorch 1.13's CPU autocast
    /// refuses any other even when off).
    at::ScalarType dtype() const { return dtype_; }
    /// Empty when this build can train the format on the device; else why not.
    virtual std::string unsupported() const;
    /// Readies the model, after it is built and before the optimizer sees its
    /// parameters (pure fp16 casts it; fp8 takes over its Linear layers). Throws
    /// std::runtime_error saying why the model cannot take the format.
    virtual void prepare(models::Network& model) { (void)model; }
    /// The input as the model takes it (half for pure fp16).
    virtual at::Tensor input(const at::Tensor& x) const { return x; }

    /// Runs `forward` under the arm's autocast. `cache` off for no-grad passes and
    /// graph capture (LibTorch 1.13 loses grad_fn through the cast cache otherwise).
    template <class F>
    auto forward(F&& forward, bool cache = true) const {
        ::ampbench::autocast::AutocastGuard guard(device_.type(), dtype_, autocast_, cache);
        return forward();
    }
    /// Backward of one micro-batch's loss: divided by the K micro-batches of the
    /// step (scaled where there is a loss scaler). Runs outside the autocast region.
    virtual void backward(const at::Tensor& loss, int accumulation) const;

    /// The scaler, for finishOptimizerStep; null unless fp16 autocast with scaling.
    virtual LossScaler* scaler() const { return nullptr; }
    /// A copy of the scale this step's backward uses (undefined without a scaler).
    at::Tensor scaleInUse() const;
    /// "ATen's fused kernels" or "portable tensor ops"; empty without a scaler.
    std::string scalerKind() const;

    /// Lines for the run's first events: what the format does to this model.
    virtual std::vector<std::string> startNotes() const { return {}; }
    /// Around an optimizer step whose per-layer numerics are recorded: the format's
    /// own records of that step (fp8: each FP8 tensor's cast), after its backward.
    virtual void beforeRecordedStep() {}
    virtual std::vector<run::NumericsRecord> recordedStep(int64_t step) {
        (void)step;
        return {};
    }

  protected:
    Precision(config::Precision kind, bool autocast, at::ScalarType dtype, c10::Device device)
        : kind_(kind), autocast_(autocast), dtype_(dtype), device_(device) {}
    c10::Device device() const { return device_; }

  private:
    config::Precision kind_;
    bool autocast_;
    at::ScalarType dtype_;
    c10::Device device_;
};

}  // namespace ampbench::amp
