#pragma once
// Per-layer numerics summed up over a run: which gradients and module outputs sit
// worst in fp16's range. Pure functions over the stored rows.
#include <cstdint>
#include <string>
#include <vector>

#include "core/analysis/ExperimentData.h"
#include "core/run/Numerics.h"

namespace ampbench::analysis {

/// One tensor (a parameter's gradient or a module's output) over every step observed.
struct LayerNumerics {
    std::string name;
    run::NumericsKind kind = run::NumericsKind::Grad;
    std::string dtype;
    int64_t numel = 0;
    int64_t observations = 0;             ///< steps it was observed at
    double max_underflow_subnormal = 0;   ///< worst share under fp16's smallest subnormal
    double mean_underflow_subnormal = 0;  ///< mean of that share over the observations
    double max_underflow_normal = 0;      ///< worst share under fp16's smallest normal
    double min_headroom_log2 = 0;         ///< least headroom to overflow (−inf: non-finite)
    int64_t min_headroom_step = 0;
    int64_t nonfinite_steps = 0;       ///< observations with an inf or NaN value
    int64_t first_nonfinite_step = 0;  ///< 0: none
};

struct NumericsSummary {
    std::vector<LayerNumerics> layers;  ///< gradients, then outputs, by name
    std::vector<int64_t> steps;         ///< the steps observed, ascending
};

NumericsSummary summarizeNumerics(const std::vector<run::NumericsRecord>& rows);

/// The `n` layers with the largest share of values lost to underflow (under the
/// smallest subnormal, ties by the share under the smallest normal); layers with
/// none are left out.
std::vector<LayerNumerics> worstUnderflow(const NumericsSummary& summary, size_t n);
/// The `n` layers with the least headroom to fp16's overflow (non-finite first).
std::vector<LayerNumerics> leastHeadroom(const NumericsSummary& summary, size_t n);

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
enum class NumericsMetric { UnderflowSubnormal, UnderflowNormal, Headroom };

/// A run's rows as a grid: one row per tensor (gradients, then outputs, by name), one
/// column per step observed; `cells[row][column]` points into `rows` (null: not
/// observed then). Values are the metric's (a share 0…1, or headroom in log2 with
/// ±inf kept).
struct NumericsGrid {
    std::vector<std::string> names;  ///< "head.weight (grad)", "blocks.0 (output)"
    std::vector<int64_t> steps;
    std::vector<std::vector<const run::NumericsRecord*>> cells;
};
NumericsGrid numericsGrid(const std::vector<run::NumericsRecord>& rows);
double metricValue(const run::NumericsRecord& record, NumericsMetric metric);
/// The numbers of one cell for a tooltip: "head.weight (grad), step 40: < 2^-24 0.12%, ..."
std::string cellText(const NumericsGrid& grid, size_t row, size_t column);

/// "12.5 (×5800)": doublings left to overflow, "none" when non-finite, "∞" for zeros.
std::string formatHeadroom(double log2);

/// The worst layers as two text tables (underflow, headroom) for the CLI.
std::string worstLayersText(const NumericsSummary& summary, size_t n);

}  // namespace ampbench::analysis
