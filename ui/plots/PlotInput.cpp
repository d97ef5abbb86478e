#include "ui/plots/PlotInput.h"

#include <QMap>
#include <set>

#include "ui/data/RunDataCache.h"
#include "ui/report/Palette.h"

namespace ampbench::ui {
namespace {

constexpr int kShortLabelChars = 9;

/// Keeps both ends: experiment names often share a prefix and differ at the end.
QString elided(const QString& text, int chars) {
    if (text.size() <= chars) {
        return text;
    }
    const int head = (chars - 1) / 2;
    return text.left(head) + QChar(0x2026) + text.right(chars - 1 - head);
}

}  // namespace

PlotInput buildPlotInput(const RunDataCache& cache) {
    PlotInput in;
    std::vector<const RunSeries*> held;
    std::set<int64_t> experiments;
    for (qint64 id : cache.runs()) {
        if (const RunSeries* s = cache.series(id)) {
            held.push_back(s);
            experiments.insert(s->row.experiment_id);
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
            g.shortLabel = several ? arm + "\n" + elided(experiment, kShortLabelChars) : arm;
            g.color = report::armColor(static_cast<int>(in.groups.size()));
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
            r.color = report::seedShade(g.color, i, n);
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
