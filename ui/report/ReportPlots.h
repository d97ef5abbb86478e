#pragma once
// The report's plots, drawn by QCustomPlot into images without showing a window.
// QCustomPlot is a QWidget: call from the GUI thread of a QApplication (the CLI
// creates one on the offscreen platform).
#include <vector>

#include "core/analysis/LayerNumerics.h"
#include "ui/report/ReportContent.h"

namespace ampbench::report {

struct PlotOptions {
    int width = 860;  ///< logical pixels
    int height = 360;
    double scale = 2.0;  ///< device pixels per logical pixel (sharp in print)
};

/// Loss overlay with the noise band, validation metric, memory bars, step-time
/// distribution and the loss-scale timeline with skipped steps.
/// With per-layer numerics, also two heatmaps for the first run of each arm that
/// recorded them (ids from numericsPlotId; the report shows them with that run's
/// tables, not among the plots), and for such a run with FP8 casts its scale history
/// (scalesPlotId).
std::vector<PlotImage> renderPlots(const ReportContent& content, const PlotOptions& options = {});

/// "numerics-RUN-underflow" or "numerics-RUN-headroom".
QString numericsPlotId(int64_t run_id, analysis::NumericsMetric metric);
/// "numerics-RUN-scales": the FP8 casts' scales over the steps.
QString scalesPlotId(int64_t run_id);
/// An advice's throughput against memory (shown with the advice, not among the plots).
inline const QString kAdvicePlotId = QStringLiteral("advice");

}  // namespace ampbench::report
