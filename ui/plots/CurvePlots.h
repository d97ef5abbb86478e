#pragma once
// Per-step and per-eval curves of the runs on show. Each function rebuilds one
// panel from the plot input; none reads the store or computes statistics
// beyond the core's pure series functions.
#include <QVector>
#include <vector>

#include <functional>

#include "core/analysis/PlotSeries.h"
#include "ui/plots/CurveCache.h"

class QCPAxis;

namespace ampbench::ui {

class PlotPanel;
struct PlotInput;
struct PlotRun;

/// Training loss (EMA-smoothed over the faded raw curve, skipped steps marked).
void drawLoss(PlotPanel& panel, const PlotInput& input);
/// Memory after each step (CUDA allocator, or resident set on CPU) over x, and the
/// peak so far dashed (where it ends is the peak the summary gives). False when no
/// run recorded any.
bool drawMemory(PlotPanel& panel, const PlotInput& input);
/// Dynamic loss scale over x, on a log2 axis; runs without a scaler are left out.
/// False when no run on show has a scaler.
bool drawLossScale(PlotPanel& panel, const PlotInput& input);

// Shared by the plot functions.
QVector<double> toQVector(const std::vector<double>& v);
/// A per-step curve of run `r` on the input's x-axis: `metric` of its steps (for a
/// log axis when `log`), reused from the input's cache and extended by the run's
/// new steps while the axis is unchanged.
CurvePtr stepCurve(const PlotInput& input, const PlotRun& run, const QString& name,
                   ampbench::analysis::StepMetric metric, bool log = false);
/// stepCurve for a per-run share of a figure: a member of fused seeds recorded the
/// fused step (its time, its memory), which trained every member at once, so its
/// values are divided by how many were fused (RunSeries::fused_group), as the summary
/// divides them.
CurvePtr sharedStepCurve(const PlotInput& input, const PlotRun& run, const QString& name,
                         ampbench::analysis::StepMetric metric);
/// A curve computed from others of run `r`: the cached one while the run's
/// revision and `options` are unchanged, else what `build` returns.
CurvePtr derivedCurve(const PlotInput& input, const PlotRun& run, const QString& name,
                      const QString& options, const std::function<QSharedPointer<Curve>()>& build);
/// Label and ticker of the x-axis for `axis` (m:s ticks for wall time).
void setXAxis(PlotPanel& panel, ampbench::analysis::XAxis axis);
/// Linear or logarithmic (base `base`) value axis.
void setLogAxis(QCPAxis* axis, bool log, double base = 10.0);

}  // namespace ampbench::ui
