#include "ui/plots/TimingPlots.h"

#include <algorithm>
#include <cmath>

#include <QObject>

#include "core/analysis/Summary.h"
#include "ui/data/RunDataCache.h"
#include "ui/plots/CurvePlots.h"
#include "ui/plots/PlotInput.h"
#include "ui/plots/PlotPanel.h"

namespace ampbench::ui {
namespace {

const analysis::ArmSummary* findArm(const std::vector<analysis::ArmSummary>& arms,
                                    const QString& label) {
    const std::string l = label.toStdString();
    for (const auto& a : arms) {
        if (a.arm == l) {
            return &a;
        }
    }
    return nullptr;
}

}  // namespace

void drawStepTime(PlotPanel& panel, const PlotInput& in, bool perSample) {
    panel.clearCurves();
    setXAxis(panel, in.xAxis);
    panel.yAxis->setLabel(perSample ? QObject::tr("ms per sample (median dashed)")
                                    : QObject::tr("step time ms (median dashed)"));
    const analysis::StepMetric metric =
        perSample ? analysis::StepMetric::MsPerSample : analysis::StepMetric::StepMs;
    const auto arms = analysis::summarizeArms(groupedSummaries(in));
    double top = 0;
    for (const PlotGroup& g : in.groups) {
        QCPGraph* first = nullptr;
        double xmin = INFINITY, xmax = -INFINITY;
        for (int index : g.runs) {
            const PlotRun& r = in.runs[static_cast<size_t>(index)];
            QCPGraph* curve = panel.addCurve(r.label, r.color, nullptr, r.style);
            // Per sample, a fused member's share of the fused step (as the summary).
            const CurvePtr data = perSample ? sharedStepCurve(in, r, "ms-per-sample", metric)
                                            : stepCurve(in, r, "step-ms", metric);
            panel.setCurve(curve, data);
            if (!data->isEmpty()) {
                xmin = std::min(xmin, data->firstKey());
                xmax = std::max(xmax, data->lastKey());
            }
            first = first ? first : curve;
            const analysis::RankStepTimes& ranks = r.series->ranks;
            if (!perSample && !ranks.empty() && !data->isEmpty()) {
                // A data-parallel run: the curve is rank 0's; the dotted lines span
                // the ranks' median step times (fastest and slowest rank).
                for (const double ms : {ranks.min_ms, ranks.max_ms}) {
                    QCPGraph* edge = panel.addCompanion(curve, r.color);
                    edge->setPen(QPen(r.color, 1.0, Qt::DotLine));
                    edge->setData({data->firstKey(), data->lastKey()}, {ms, ms}, true);
                }
            }
        }
        const analysis::ArmSummary* a = findArm(arms, g.label);
        const double mid = !a ? NAN : perSample ? a->ms_per_sample : a->median_step_ms;
        if (!first || !std::isfinite(mid) || !(mid > 0) || !(xmax >= xmin)) {
            continue;
        }
        QCPGraph* median = panel.addCompanion(first, g.color);
        median->setPen(QPen(g.color.darker(140), 2.0, Qt::DashLine));
        median->setData({xmin, xmax}, {mid, mid}, true);
        if (std::isfinite(a->p90_step_ms) && a->median_step_ms > 0) {
            top = std::max(top, a->p90_step_ms * mid / a->median_step_ms);
        }
    }
    panel.fitUnlessUserView();
    if (!panel.userView() && top > 0) {
        // Warm-up and the odd slow step would squash the band that matters.
        panel.yAxis->setRange(0, top * 1.6);
    }
}

void drawArmBars(PlotPanel& panel, const PlotInput& in) {
    panel.clearCurves();
    qDeleteAll(panel.findChildren<QCPBarsGroup*>(QString(), Qt::FindDirectChildrenOnly));
    const auto arms = analysis::summarizeArms(groupedSummaries(in));
    panel.yAxis->setLabel(QStringLiteral("samples/s (solid)"));
    panel.yAxis2->setVisible(true);
    panel.yAxis2->setLabel(QStringLiteral("peak MiB (hatched)"));
    QVector<QPair<double, QString>> ticks;
    double maxRate = 0, maxMem = 0;
    int drawn = 0;
    const bool several = std::any_of(in.groups.begin(), in.groups.end(), [&](const PlotGroup& g) {
        return g.experiment != in.groups.front().experiment;
    });
    for (size_t i = 0; i < in.groups.size(); ++i) {
        const PlotGroup& g = in.groups[i];
        const analysis::ArmSummary* a = findArm(arms, g.label);
        const double key = static_cast<double>(i);
        // Each label gets its column's width, fitted by the panel at its size; names
        // that do not fit lose their middle (the hover over a bar names it in full).
        ticks.append({key, several ? g.arm + "\n" + g.experiment : g.arm});
        // The figures are of finished runs: while the first trains, bars of 0 drew
        // axes of 0 to 1 samples/s and MiB.
        const double sps = a && std::isfinite(a->samples_per_s) ? a->samples_per_s : 0.0;
        const double mib = a ? static_cast<double>(a->peak_mem) / (1024.0 * 1024.0) : 0.0;
        if (!(sps > 0 || mib > 0)) {
            continue;
        }
        ++drawn;
        auto* group = new QCPBarsGroup(&panel);
        group->setSpacingType(QCPBarsGroup::stAbsolute);
        group->setSpacing(2);
        QCPBars* rate = panel.addBars(g.label, g.color, panel.yAxis);
        rate->setWidth(0.35);
        rate->setBarsGroup(group);
        rate->addData(key, sps);
        QCPBars* mem = panel.addBars(g.label, g.color, panel.yAxis2);
        mem->setWidth(0.35);
        mem->setBrush(QBrush(g.color, Qt::BDiagPattern));
        mem->setBarsGroup(group);
        mem->addData(key, mib);
        maxRate = std::max(maxRate, sps);
        maxMem = std::max(maxMem, mib);
    }
    panel.setCategoryTicks(ticks);
    panel.xAxis->setLabel(QString());
    panel.xAxis->setSubTicks(false);
    panel.setMessage(in.groups.empty() ? QObject::tr("No runs on show")
                     : drawn == 0      ? QObject::tr("No finished run on show yet")
                                       : QString());
    if (!panel.userView()) {
        panel.xAxis->setRange(-0.6,
                              std::max<double>(0.6, static_cast<double>(in.groups.size()) - 0.4));
        panel.yAxis->setRange(0, maxRate > 0 ? maxRate * 1.15 : 1);
        panel.yAxis2->setRange(0, maxMem > 0 ? maxMem * 1.15 : 1);
    }
}

}  // namespace ampbench::ui
