#pragma once
// The FP8 arm's Linear layers: each built-in model's Linear multiplies through this
// hook. A layer whose shapes the scaled matmul takes computes forward e4m3 × e4m3,
// the input gradient e5m2 × e4m3 and the weight gradient e5m2 × e4m3 ("hybrid"),
// each with per-tensor scales kept on the device (Fp8Scaling.h) and fused casts
// (Fp8Cuda.h), bf16 out (the weight gradient fp32, for the fp32 master weights).
// Any other layer, and every layer inside an FP32 island (autocast off), runs as
// at::linear under the arm's bf16 autocast.
#include <ATen/core/Tensor.h>

#include <c10/core/Device.h>

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/amp/Fp8Plan.h"
#include "core/amp/Fp8Scaling.h"
#include "core/config/ExperimentSpec.h"
#include "core/models/Models.h"
#include "core/run/Numerics.h"

namespace ampbench::amp {

/// Empty where this build and `device` can run FP8 arms; else why not, naming the
/// requirement (LibTorch 2.4 or later with CUDA; a GPU of compute capability 8.9 or
/// later: Ada, Hopper, Blackwell).
std::string fp8Unavailable(c10::Device device);

class Fp8Linears : public models::LinearHook {
  public:
    /// The arm's recipe; the model's layers planned (the arm's fp8_modules, `rows` per
    /// micro-batch) and their scaling state made on `device`. Throws std::runtime_error
    /// where fp8Unavailable says why.
    Fp8Linears(models::Network& model, const config::ArmSpec& arm, c10::Device device,
               int64_t rows = 0);
    ~Fp8Linears() override;

    at::Tensor linear(const at::Tensor& x, const at::Tensor& weight,
                      const at::Tensor& bias) override;
    /// An FP8 layer takes gelu(x) inside its input's cast; any other as the default.
    at::Tensor geluLinear(const at::Tensor& x, const at::Tensor& weight,
                          const at::Tensor& bias) override;
    /// An FP8 layer under delayed scaling normalises inside its input's cast once its
    /// history holds an amax; any other as the default.
    at::Tensor layerNormLinear(const at::Tensor& x, const at::Tensor& ln_weight,
                               const at::Tensor& ln_bias, double eps, const at::Tensor& weight,
                               const at::Tensor& bias) override;
    const std::vector<Fp8LayerPlan>& plan() const { return plan_; }
    /// How many layerNormLinear calls normalised inside the cast so far.
    int64_t normsFused() const { return norms_fused_; }

    /// From the next forward on, each FP8 cast also counts its saturated, flushed and
    /// non-finite values (on the device) until takeCastRecords().
    void countNextStep();
    /// One record per FP8 tensor cast since countNextStep() (input, weight, output
    /// gradient of each layer): amax, scale, saturated and flushed shares in its
    /// format; one host read. Empty if none was counted.
    std::vector<run::NumericsRecord> takeCastRecords(int64_t step);

    struct Layer;  // a layer's three scaling states (Fp8Linear.cpp)

  private:
    /// The layer of `weight` where it computes in FP8 for the input `x` now (not in
    /// an FP32 island, rows a multiple of 16, on CUDA); else null.
    Layer* fp8Layer(const at::Tensor& x, const at::Tensor& weight) const;

    std::vector<Fp8LayerPlan> plan_;
    std::vector<std::unique_ptr<Layer>> layers_;
    std::unordered_map<const void*, Layer*> by_weight_;
    bool counting_ = false;
    int64_t norms_fused_ = 0;
};

}  // namespace ampbench::amp
