#pragma once
// Axis math for plotting runs: which x a step sits at, which value a metric
// has, what a log axis can show. Pure functions over store records; the GUI's
// plots and any report renderer share them.
#include <cstddef>
#include <string>
#include <vector>

#include "core/run/Records.h"

namespace ampbench::analysis {

/// What the x-axis of a run's curve counts. Samples seen is the common axis on
/// which arms with different accumulation line up.
enum class XAxis { Step, Samples, WallSeconds };

/// A per-step quantity a plot can show.
enum class StepMetric {
    Loss,
    LossScale,
    StepMs,
    MemAllocatedMiB,
    MemPeakMiB,
    GradNorm,
    Lr,
    /// Step time over the samples of a step (samples seen / step number: the
    /// effective batch), so arms with different accumulation compare per sample.
    MsPerSample,
    DataWaitMs,
};

std::string toString(XAxis axis);  ///< "step", "samples seen", "wall time (s)"

/// x of every step on `axis`, in record order (non-decreasing for every axis).
std::vector<double> stepXs(const std::vector<run::StepRecord>& steps, XAxis axis);
/// x of every evaluation on `axis`.
std::vector<double> evalXs(const std::vector<run::EvalRecord>& evals, XAxis axis);
/// The metric of one step.
double stepValue(const run::StepRecord& step, StepMetric metric);
/// The metric of every step, in record order.
std::vector<double> stepValues(const std::vector<run::StepRecord>& steps, StepMetric metric);

/// Every step metric and the x on one axis, read in one pass over the records: a
/// record holds a dozen fields, so reading one metric at a time pulls every record
/// through the cache once per metric (with 20 runs of 100,000 steps, gigabytes).
struct StepColumns {
    XAxis axis = XAxis::Step;
    std::vector<double> x;
    std::vector<std::vector<double>> values;  ///< indexed by StepMetric
    std::vector<size_t> skipped;              ///< as skippedIndices
    const std::vector<double>& of(StepMetric m) const { return values[static_cast<size_t>(m)]; }
};
inline constexpr size_t kStepMetrics = static_cast<size_t>(StepMetric::DataWaitMs) + 1;
StepColumns stepColumns(const std::vector<run::StepRecord>& steps, XAxis axis);

/// Values a logarithmic axis can draw: non-positive and non-finite become NaN (a gap).
std::vector<double> forLogAxis(std::vector<double> values);

/// Positions (indices into `steps`) of the steps the loss scaler skipped.
std::vector<size_t> skippedIndices(const std::vector<run::StepRecord>& steps);

/// EMA weight for a smoothing control in [0, 100]: 0 = raw, 100 = 0.99 (the
/// strongest smoothing the TensorBoard slider offers).
double smoothingWeight(int percent);

}  // namespace ampbench::analysis
