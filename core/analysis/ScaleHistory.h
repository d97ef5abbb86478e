#pragma once
// The per-tensor scales an FP8 arm cast with, over the optimizer steps: one curve per
// cast tensor, and per role (input, weight, grad_output) the median and the min–max
// band across its tensors, so that a model with hundreds of casts stays readable; the
// tensors that saturated are named. Pure functions over the stored numerics rows.
#include <cstdint>
#include <string>
#include <vector>

#include "core/run/Numerics.h"

namespace ampbench::analysis {

/// What a cast tensor is to its layer, from its name's last part ("blocks.0.qkv:input").
enum class CastRole { Input, Weight, GradOutput, Other };
CastRole castRoleOf(const std::string& name);
/// "input", "weight", "grad_output", "other".
const char* castRoleName(CastRole role);

/// One cast tensor's scale over the steps of the history (NaN where it was not
/// observed, or its scale was not a positive finite number).
struct ScaleCurve {
    std::string name;  ///< "blocks.0.qkv:input"
    CastRole role = CastRole::Other;
    std::string format;              ///< the last row's ("e4m3", "e5m2")
    std::vector<double> log2_scale;  ///< one per ScaleHistory::steps
    std::vector<double>
        saturated;  ///< the share past the format's largest, per step (NaN: not observed)
    double max_saturated = 0;          ///< worst share past the format's largest
    int64_t saturated_steps = 0;       ///< observations with any value saturated
    int64_t first_saturated_step = 0;  ///< 0: none
};

/// A role's tensors at each step: the median, least and largest log2 scale among those
/// observed then (NaN where none was), and which tensor held the least and the largest.
struct ScaleBand {
    CastRole role = CastRole::Other;
    size_t tensors = 0;
    std::vector<double> median, min, max;      ///< log2 of the scale, one per step
    std::vector<size_t> min_curve, max_curve;  ///< indices into ScaleHistory::curves
};

struct ScaleHistory {
    std::vector<int64_t> steps;      ///< the steps with a cast observed, ascending
    std::vector<ScaleCurve> curves;  ///< by role (input, weight, grad_output, other), then name
    std::vector<ScaleBand> bands;    ///< the roles present, in that order
    /// The tensors that saturated, worst first (largest share, then most steps, then
    /// name): indices into curves. Every one of them, not only those named in a legend.
    std::vector<size_t> saturated;
    bool empty() const { return curves.empty(); }
};

/// The cast rows (kind cast) of a run as a scale history; empty without any.
ScaleHistory scaleHistory(const std::vector<run::NumericsRecord>& rows);

/// "2^3.5": a log2 value as the power of two it stands for; "–" for NaN.
std::string log2Text(double log2);

/// The numbers at one step for a tooltip: each role's median and range (naming the
/// tensors at its ends) and every tensor that saturated then; empty past the steps.
std::string scaleStepText(const ScaleHistory& history, size_t column);

/// "12 cast tensors (4 input, 4 weight, 4 grad_output) at 30 steps; 2 saturated: ...":
/// a line for a caption naming at most `named` of the saturated tensors, worst first.
std::string scaleHistorySummary(const ScaleHistory& history, size_t named);

}  // namespace ampbench::analysis
