#include "ui/plots/TimingPlots.h"

#include <algorithm>
#include <cmath>

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

void drawStepTime(PlotPanel& panel, const PlotInput& in) {
    panel.clearCurves();
    setXAxis(panel, in.xAxis);
    panel.yAxis->setLabel(QStringLiteral("step time ms (median dashed)"));
    const auto arms = analysis::summarizeArms(groupedSummaries(in));
    double top = 0;
    for (const PlotGroup& g : in.groups) {
        QCPGraph* first = nullptr;
        double xmin = INFINITY, xmax = -INFINITY;
        for (int index : g.runs) {
            const PlotRun& r = in.runs[static_cast<size_t>(index)];
            QCPGraph* curve = panel.addCurve(r.label, r.color);
            const CurvePtr data = stepCurve(in, r, "step-ms", {}, [](const auto& steps) {
                return analysis::stepValues(steps, analysis::StepMetric::StepMs);
            });
            panel.setCurve(curve, data);
            if (!data->isEmpty()) {
                xmin = std::min(xmin, data->firstKey());
                xmax = std::max(xmax, data->lastKey());
            }
            first = first ? first : curve;
        }
        const analysis::ArmSummary* a = findArm(arms, g.label);
        if (!first || !a || !std::isfinite(a->median_step_ms) || !(xmax >= xmin)) {
            continue;
        }
        QCPGraph* median = panel.addCompanion(first, g.color);
        median->setPen(QPen(g.color.darker(140), 2.0, Qt::DashLine));
        median->setData({xmin, xmax}, {a->median_step_ms, a->median_step_ms}, true);
        if (std::isfinite(a->p90_step_ms)) {
            top = std::max(top, a->p90_step_ms);
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
    QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
    double maxRate = 0, maxMem = 0;
    for (size_t i = 0; i < in.groups.size(); ++i) {
        const PlotGroup& g = in.groups[i];
        const analysis::ArmSummary* a = findArm(arms, g.label);
        const double key = static_cast<double>(i);
        ticker->addTick(key, g.shortLabel);
        if (!a) {
            continue;
        }
        auto* group = new QCPBarsGroup(&panel);
        group->setSpacingType(QCPBarsGroup::stAbsolute);
        group->setSpacing(2);
        QCPBars* rate = panel.addBars(g.label, g.color, panel.yAxis);
        rate->setWidth(0.35);
        rate->setBarsGroup(group);
        const double sps = std::isfinite(a->samples_per_s) ? a->samples_per_s : 0.0;
        rate->addData(key, sps);
        QCPBars* mem = panel.addBars(g.label, g.color, panel.yAxis2);
        mem->setWidth(0.35);
        mem->setBrush(QBrush(g.color, Qt::BDiagPattern));
        mem->setBarsGroup(group);
        const double mib = static_cast<double>(a->peak_mem) / (1024.0 * 1024.0);
        mem->addData(key, mib);
        maxRate = std::max(maxRate, sps);
        maxMem = std::max(maxMem, mib);
    }
    panel.xAxis->setTicker(ticker);
    panel.xAxis->setLabel(QString());
    panel.xAxis->setSubTicks(false);
    panel.setMessage(in.groups.empty() ? QObject::tr("No runs on show") : QString());
    if (!panel.userView()) {
        panel.xAxis->setRange(-0.6,
                              std::max<double>(0.6, static_cast<double>(in.groups.size()) - 0.4));
        panel.yAxis->setRange(0, maxRate > 0 ? maxRate * 1.15 : 1);
        panel.yAxis2->setRange(0, maxMem > 0 ? maxMem * 1.15 : 1);
    }
}

}  // namespace ampbench::ui
