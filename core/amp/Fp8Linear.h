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

#include "core/amp/Fp8Scaling.h"
#include "core/config/ExperimentSpec.h"
#include "core/models/Models.h"
#include "core/run/Numerics.h"

namespace ampbench::amp {

/// Empty where this build and `device` can run FP8 arms; else why not, naming the
/// requirement (LibTorch 2.4 or later with CUDA; a GPU of compute capability 8.9 or
/// later: Ada, Hopper, Blackwell).
std::string fp8Unavailable(c10::Device device);

/// The smallest width (in and out features) a layer computes in FP8 with: below it
/// the casts cost more than the faster matmul saves.
inline constexpr int64_t kFp8MinFeatures = 128;

/// What the FP8 plan weighs a layer's matmuls against its casts with (`auto`). Leads
/// from the CUDA host, not a measurement of the GPU a run is on: dense matmul rates at
/// GPT-2 shapes (bf16 670-780 TFLOP/s, e4m3 950-1,340 on an H200, the lower ends), the
/// rate the fused casts move bytes at, and the fixed cost of a layer's cast launches
/// (input, weight, output gradient and its column sums) per step.
struct Fp8CostModel {
    double bf16_flops = 700e12;
    double fp8_flops = 1100e12;
    double cast_bytes_per_s = 3.0e12;
    double cast_fixed_s = 20e-6;
};

/// One Linear layer of the model and whether it computes in FP8.
struct Fp8LayerPlan {
    std::string path;  ///< "blocks.0.qkv"
    int64_t in = 0, out = 0;
    bool fp8 = false;
    std::string why_not;  ///< "50257 outputs: not a multiple of 16"
    /// Where the choice was weighed (`auto`): per micro-batch, the matmul time FP8
    /// saves (forward, input and weight gradients) and its casts' time, in seconds.
    double saves_s = 0, casts_s = 0;
};

/// How an arm chooses its FP8 layers (its `fp8_modules`): empty or "auto", from each
/// layer's shapes and the rows it multiplies (the layer computes in FP8 where the
/// matmul time saved exceeds its casts' time, Fp8CostModel); "all", every layer the
/// scaled matmul takes; otherwise names or glob patterns (';' or ',' between them) of
/// the layers to compute in FP8, where a name without a dot is any layer of that name
/// (fc1 = blocks.*.fc1).
bool fp8ModulesAuto(const std::string& modules);
bool fp8ModulesAll(const std::string& modules);

/// One layer of `in` inputs and `out` outputs multiplying `rows` rows per micro-batch,
/// weighed as `auto` weighs it: FP8 where its matmuls' time saved exceeds its casts'.
Fp8LayerPlan weighFp8Layer(const std::string& path, int64_t in, int64_t out, int64_t rows,
                           const Fp8CostModel& costs = {});
/// Every Linear layer of `model` in module order, each with its FP8 decision under
/// `modules`; `rows`, the rows each layer multiplies per micro-batch (samples, or
/// samples × sequence length), is what `auto` weighs with (0: unknown, every layer the
/// scaled matmul takes).
std::vector<Fp8LayerPlan> planFp8Layers(const models::Network& model,
                                        const std::string& modules = "all", int64_t rows = 0,
                                        const Fp8CostModel& costs = {});
/// The rows each Linear layer of a built-in model multiplies per micro-batch: the
/// micro-batch, times the sequence length for the decoder.
int64_t linearRows(const config::ExperimentSpec& spec);
/// Empty when every pattern of `modules` names a Linear layer of `model` (or it is auto
/// or all); else a message naming those that match none and listing the layers.
std::string unmatchedFp8Modules(const models::Network& model, const std::string& modules);
/// "24 of 25 Linear layers in FP8; in bf16: head (50257 outputs: not a multiple of 16)";
/// layers of the blocks that share a decision and its reason are named once
/// (blocks.*.proj).
std::string describe(const std::vector<Fp8LayerPlan>& plan);

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
