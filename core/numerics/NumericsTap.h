#pragma once
// The trainer's ModuleTap: FP32 islands by module name or glob pattern, and the
// module outputs of one forward pass observed for the numerics records.
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/models/Models.h"
#include "core/numerics/Fp16Numerics.h"

namespace ampbench::numerics {

/// "head;blocks.*.attn" → {"head", "blocks.*.attn"}: split at ';' and ',', trimmed,
/// empty parts dropped.
std::vector<std::string> splitPatterns(const std::string& text);

/// Whether `path` matches `pattern` (glob: * any run of characters, dots included; ?
/// one character; [..] a class), or equals it.
bool matchesPattern(const std::string& pattern, const std::string& path);

/// Empty when every pattern matches one of `points`; else a message naming each one
/// that matches nothing and listing some module names the model has.
std::string unmatchedPatterns(const std::vector<std::string>& patterns,
                              const std::vector<std::string>& points);

class NumericsTap : public models::ModuleTap {
  public:
    /// `format`: what the module outputs are measured against (run::formatOfArm).
    explicit NumericsTap(std::vector<std::string> fp32_patterns,
                         const run::NumberFormat& format = run::kFp16);
    const run::NumberFormat& format() const { return format_; }
    bool fp32(const std::string& path) const override;
    at::Tensor output(const std::string& path, const at::Tensor& out) override;

    /// Observes the module outputs of the forward passes until takeObservation().
    void observe(int64_t step, double loss_scale);
    /// The same with the loss scale read from the device with the statistics.
    void observe(int64_t step, const at::Tensor& loss_scale);
    bool observing() const { return observation_.has_value(); }
    /// The outputs seen since observe(), their statistics not yet read; stops observing.
    std::optional<Observation> takeObservation();

    /// A tensor that held inf or NaN: where it was and its dtype.
    struct Found {
        std::string name;
        std::string dtype;
    };
    /// Replaying a non-finite step: watches every module output in forward and the
    /// gradient flowing into it in backward (through a copy of the output, so an
    /// in-place op after the module cannot hide it) until stopLocating().
    void startLocating();
    void stopLocating() { locating_ = false; }
    /// The first module output (forward order) that held inf or NaN.
    const std::optional<Found>& firstOutput() const { return first_output_; }
    /// The first output gradient (backward order) that held inf or NaN.
    const std::optional<Found>& firstGradient() const { return first_gradient_; }

  private:
    std::vector<std::string> patterns_;
    run::NumberFormat format_;
    mutable std::unordered_map<std::string, bool> fp32_cache_;
    std::optional<Observation> observation_;
    bool locating_ = false;
    std::optional<Found> first_output_;
    std::optional<Found> first_gradient_;
};

}  // namespace ampbench::numerics
