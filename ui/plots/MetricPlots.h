#pragma once
// One entry point per panel: draw the metric the user chose for it.

namespace ampbench::ui {

class PlotPanel;
struct PlotInput;
enum class PlotMetric;

/// Rebuilds `panel` with `metric` (resolved: no auto metric) of the runs in
/// `input`. False when the runs on show have nothing of it to draw (no
/// evaluation, no loss scaler, no data wait), so the panel may be hidden.
bool drawMetric(PlotPanel& panel, PlotMetric metric, const PlotInput& input);

/// Validation accuracy (in %) or loss per arm: the mean over its seeds at each
/// evaluation they all made, with a ±2σ band when it has two or more; an
/// evaluation only some of its runs made is drawn as that run's point.
bool drawValidationBand(PlotPanel& panel, const PlotInput& input, bool accuracy);

}  // namespace ampbench::ui
