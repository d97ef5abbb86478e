#pragma once
// Per-layer numerics summed up over a run: which gradients, module outputs and cast
// tensors sit worst in the range of the format each is measured against (fp16, bf16,
// e4m3, e5m2). Pure functions over the stored rows.
#include <cstdint>
#include <string>
#include <vector>

#include "core/analysis/ExperimentData.h"
#include "core/run/Numerics.h"

namespace ampbench::analysis {

/// One tensor (a parameter's gradient, a module's output or a cast tensor) over every
/// step observed.
struct LayerNumerics {
    std::string name;
    run::NumericsKind kind = run::NumericsKind::Grad;
    std::string dtype;
    std::string format = "fp16";  ///< the format its rows are against (the last row's)
    int64_t numel = 0;
    int64_t observations = 0;             ///< steps it was observed at
    double max_underflow_subnormal = 0;   ///< worst share under the format's smallest subnormal
    double mean_underflow_subnormal = 0;  ///< mean of that share over the observations
    double max_underflow_normal = 0;      ///< worst share under the format's smallest normal
    double mean_underflow_normal = 0;     ///< mean of that share over the observations
    double max_saturated = 0;             ///< worst share past the format's largest value
    double mean_saturated = 0;            ///< mean of that share over the observations
    double max_absmax = 0;                ///< largest abs-max (as scaled) of any observation
    double last_scale = 1;                ///< the scale of its last observation (casts)
    double min_headroom_log2 = 0;         ///< least headroom to overflow (−inf: non-finite)
    int64_t min_headroom_step = 0;
    int64_t nonfinite_steps = 0;       ///< observations with an inf or NaN value
    int64_t first_nonfinite_step = 0;  ///< 0: none
};

struct NumericsSummary {
    std::vector<LayerNumerics> layers;  ///< gradients, then outputs, then casts, by name
    std::vector<int64_t> steps;         ///< the steps observed, ascending
};

NumericsSummary summarizeNumerics(const std::vector<run::NumericsRecord>& rows);

/// The `n` layers with the largest share of values lost to underflow (under the
/// smallest subnormal, ties by the share under the smallest normal); layers with
/// none are left out.
std::vector<LayerNumerics> worstUnderflow(const NumericsSummary& summary, size_t n);
/// The `n` layers with the least headroom to their format's overflow (non-finite first).
std::vector<LayerNumerics> leastHeadroom(const NumericsSummary& summary, size_t n);
/// The tensors as FP8 layers cast them (kind cast), by name.
std::vector<LayerNumerics> castTensors(const NumericsSummary& summary);
/// The formats the rows are against, each once, in the order first met.
std::vector<std::string> formatsOf(const NumericsSummary& summary);

/// " (grad)", " (output)", " (cast)": what a tensor's name is followed by.
const char* kindSuffix(run::NumericsKind kind);
/// "headroom to fp16's largest, 65504" (the format's name itself when unknown).
std::string headroomTarget(const std::string& format);

/// One run's numerics, for the report.
struct RunNumerics {
    int64_t run_id = 0;
    std::string arm;
    uint64_t seed = 0;
    NumericsSummary summary;
};
/// The runs of an experiment that recorded numerics, in run order.
std::vector<RunNumerics> experimentNumerics(const ExperimentData& data);

/// What a numerics heatmap colours.
enum class NumericsMetric { UnderflowSubnormal, UnderflowNormal, Headroom, Saturated };
/// The metric's name for a menu or a title, naming `formats` (formatsOf) where they
/// decide its limits: "share under fp16's smallest subnormal (2^-24)",
/// "headroom to e4m3's largest, 448 / fp16's largest, 65504 (log2 largest/abs-max)".
std::string metricLabel(NumericsMetric metric, const std::vector<std::string>& formats);

/// A run's rows as a grid: one row per tensor (gradients, then outputs, by name), one
/// column per step observed; `cells[row][column]` points into `rows` (null: not
/// observed then). Values are the metric's (a share 0…1, or headroom in log2 with
/// ±inf kept).
struct NumericsGrid {
    /// "head.weight (grad)", "blocks.0 (output)", "blocks.0.qkv:input (cast)"
    std::vector<std::string> names;
    std::vector<int64_t> steps;
    std::vector<std::vector<const run::NumericsRecord*>> cells;
};
NumericsGrid numericsGrid(const std::vector<run::NumericsRecord>& rows);
double metricValue(const run::NumericsRecord& record, NumericsMetric metric);
/// The numbers of one cell for a tooltip: "head.weight (grad), step 40: ..., fp16: < 2^-24
/// 0.12%, ...", a cast tensor's scale with them.
std::string cellText(const NumericsGrid& grid, size_t row, size_t column);

/// "12.5 (×5800)": doublings left to overflow, "none" when non-finite, "∞" for zeros.
std::string formatHeadroom(double log2);

/// The worst layers as text tables for the CLI: underflow, headroom (each row naming
/// its format, with its saturated share), and the cast tensors with their format,
/// scale, abs-max, saturated and underflow shares.
std::string worstLayersText(const NumericsSummary& summary, size_t n);

}  // namespace ampbench::analysis
