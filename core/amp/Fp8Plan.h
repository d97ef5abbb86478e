#pragma once
// The FP8 arm's layer plan: which of a built-in model's Linear layers compute in FP8,
// and why the others stay in bf16 (no LibTorch beyond the model's module tree).
#include <cstdint>
#include <string>
#include <vector>

#include "core/config/ExperimentSpec.h"
#include "core/models/Models.h"

namespace ampbench::amp {

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

}  // namespace ampbench::amp
