#include "ui/plots/PlotInput.h"

#include <QMap>
#include <iterator>

#include "core/config/Placement.h"
#include "ui/data/RunDataCache.h"
#include "ui/draw/Palette.h"

namespace ampbench::ui {
namespace {

/// Line styles of the experiments on show, in the order they appear.
Qt::PenStyle experimentStyle(int index) {
    static const Qt::PenStyle styles[] = {Qt::SolidLine, Qt::DashLine, Qt::DotLine, Qt::DashDotLine,
                                          Qt::DashDotDotLine};
    return styles[static_cast<size_t>(index) % std::size(styles)];
}

}  // namespace

PlotInput buildPlotInput(const RunDataCache& cache, bool dark) {
    PlotInput in;
    std::vector<const RunSeries*> held;
    QMap<int64_t, int> experiments;  // id → order of appearance
    for (qint64 id : cache.runs()) {
        if (const RunSeries* s = cache.series(id)) {
            held.push_back(s);
            if (!experiments.contains(s->row.experiment_id)) {
                experiments.insert(s->row.experiment_id, static_cast<int>(experiments.size()));
            }
        }
    }
    const bool several = experiments.size() > 1;
    QMap<QString, int> groupOf;  // group key → index
    for (const RunSeries* s : held) {
        const QString arm = QString::fromStdString(s->row.arm);
        const QString key = QStringLiteral("%1/%2").arg(s->row.experiment_id).arg(arm);
        if (!groupOf.contains(key)) {
            PlotGroup g;
            const QString experiment = QString::fromStdString(s->row.experiment_name);
            g.label = several ? experiment + "/" + arm : arm;
            g.arm = arm;
            g.experiment = experiment;
            g.color = draw::armColor(s->row.arm_index);
            g.style = experimentStyle(experiments.value(s->row.experiment_id));
            g.memory = analysis::memoryMeasure(s->row.env_json);
            groupOf.insert(key, static_cast<int>(in.groups.size()));
            in.groups.push_back(g);
        }
        PlotRun r;
        r.series = s;
        r.group = groupOf.value(key);
        in.groups[static_cast<size_t>(r.group)].runs.push_back(static_cast<int>(in.runs.size()));
        in.runs.push_back(r);
    }
    for (PlotGroup& g : in.groups) {
        const int n = static_cast<int>(g.runs.size());
        for (int i = 0; i < n; ++i) {
            PlotRun& r = in.runs[static_cast<size_t>(g.runs[static_cast<size_t>(i)])];
            r.color = draw::seedShade(g.color, i, n, dark);
            r.style = g.style;
            r.label = g.label + QStringLiteral(" \u00b7 seed %1").arg(r.series->row.seed);
        }
    }
    return in;
}

std::vector<analysis::RunSummary> groupedSummaries(const PlotInput& input) {
    std::vector<analysis::RunSummary> out;
    out.reserve(input.runs.size());
    for (const PlotRun& r : input.runs) {
        analysis::RunSummary s = r.series->summary;
        s.arm = input.groups[static_cast<size_t>(r.group)].label.toStdString();
        out.push_back(std::move(s));
    }
    return out;
}

}  // namespace ampbench::ui
