#pragma once
#include <QColor>
#include <QString>
#include <vector>

#include "core/analysis/MemoryMeasure.h"
#include "core/analysis/PlotSeries.h"
#include "core/analysis/Summary.h"

namespace ampbench::ui {

class CurveCache;
class RunDataCache;
struct RunSeries;

/// One run on show, labelled and coloured.
struct PlotRun {
    const RunSeries* series = nullptr;
    QString label;                       ///< "amp · seed 2"
    int group = 0;                       ///< index into PlotInput::groups
    QColor color;                        ///< the group's colour, shaded by seed
    Qt::PenStyle style = Qt::SolidLine;  ///< the group's
};

/// Runs of one arm (of one experiment when several are on show). Its colour is the
/// arm's place in its experiment's spec, as in the report, so an arm keeps its
/// colour whatever else is on show; with several experiments on show, the second
/// and later ones draw dashed, dotted, ... lines.
struct PlotGroup {
    QString label;       ///< "amp", or "my-experiment/amp" across experiments
    QString arm;         ///< "amp"
    QString experiment;  ///< the experiment's name
    QColor color;
    Qt::PenStyle style = Qt::SolidLine;
    /// What its runs' memory figures measure (the CUDA allocator, the run's own CPU
    /// tensors, or an older CPU run's process resident set).
    ampbench::analysis::MemoryMeasure memory = ampbench::analysis::MemoryMeasure::Tensors;
    std::vector<int> runs;  ///< indices into PlotInput::runs
};

/// What every plot draws from; rebuilt for each redraw.
struct PlotInput {
    std::vector<PlotRun> runs;
    std::vector<PlotGroup> groups;
    ampbench::analysis::XAxis xAxis = ampbench::analysis::XAxis::Samples;
    double smoothing = 0.0;        ///< EMA weight, 0 = raw
    bool logY = false;             ///< loss on a logarithmic axis
    CurveCache* curves = nullptr;  ///< built curves to reuse; null builds every time
};

/// Groups the cache's runs by arm (by experiment and arm when they come from
/// several experiments), in the cache's order, and colours them.
/// `dark`: drawn on a dark background (seed shades stay clear of it).
PlotInput buildPlotInput(const RunDataCache& cache, bool dark = false);

/// The runs' summaries with `arm` replaced by their group label, ready for
/// analysis::summarizeArms.
std::vector<ampbench::analysis::RunSummary> groupedSummaries(const PlotInput& input);

}  // namespace ampbench::ui
