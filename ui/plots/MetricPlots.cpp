#include "ui/plots/MetricPlots.h"

#include <QObject>
#include <algorithm>
#include <cmath>
#include <set>

#include "core/analysis/MetricBand.h"
#include "core/analysis/PlotSeries.h"
#include "ui/data/RunDataCache.h"
#include "ui/draw/Palette.h"
#include "ui/plots/CurvePlots.h"
#include "ui/plots/PlotInput.h"
#include "ui/plots/PlotMetric.h"
#include "ui/plots/PlotPanel.h"
#include "ui/plots/TimingPlots.h"

namespace ampbench::ui {
namespace {

using analysis::StepMetric;

/// One curve per run of a per-step value. `shown` says whether a value counts
/// as something to show (a data wait of 0 does not).
bool drawSeries(PlotPanel& panel, const PlotInput& in, StepMetric metric, const QString& name,
                const QString& label, bool log, const std::function<bool(double)>& shown) {
    panel.clearCurves();
    setXAxis(panel, in.xAxis);
    setLogAxis(panel.yAxis, log);
    panel.yAxis->setLabel(label);
    bool any = false;
    for (const PlotRun& r : in.runs) {
        const CurvePtr data = stepCurve(in, r, name, metric, log);
        QCPGraph* curve = panel.addCurve(r.label, r.color, nullptr, r.style);
        panel.setCurve(curve, data);
        const auto& y = data->points().y;
        any = any || std::any_of(y.begin(), y.end(), shown);
    }
    panel.fitUnlessUserView();
    return any;
}

bool finite(double v) {
    return std::isfinite(v);
}

}  // namespace

bool drawValidationBand(PlotPanel& panel, const PlotInput& in, bool accuracy) {
    panel.clearCurves();
    setXAxis(panel, in.xAxis);
    setLogAxis(panel.yAxis, false);
    const double scale = accuracy ? 100.0 : 1.0;
    panel.yAxis->setLabel(accuracy ? QObject::tr("val accuracy % (mean, band \u00b1 2\u03c3)")
                                   : QObject::tr("val loss (mean, band \u00b1 2\u03c3)"));
    bool any = false;
    for (const PlotGroup& g : in.groups) {
        std::vector<const std::vector<run::EvalRecord>*> evals;
        std::vector<const PlotRun*> runs;
        for (int index : g.runs) {
            const PlotRun& r = in.runs[static_cast<size_t>(index)];
            if (!r.series->evals.empty()) {
                evals.push_back(&r.series->evals);
                runs.push_back(&r);
            }
        }
        if (evals.empty()) {
            continue;
        }
        const analysis::MetricBand band =
            analysis::evaluationBand(g.label.toStdString(), evals, accuracy, in.xAxis);
        QVector<double> x, mean, lo, hi;
        for (size_t i = 0; i < band.x.size(); ++i) {
            if (!std::isfinite(band.mean[i])) {
                continue;
            }
            x.append(band.x[i]);
            mean.append(band.mean[i] * scale);
            const double sd = std::isfinite(band.sd[i]) ? band.sd[i] : 0.0;
            lo.append((band.mean[i] - 2 * sd) * scale);
            hi.append((band.mean[i] + 2 * sd) * scale);
        }
        // The legend names runs: the arm's mean stands for its first run, so hiding
        // that run hides the arm's summary too.
        const QString name = runs.size() > 1
                                 ? QObject::tr("%1 mean of %2").arg(g.label).arg(runs.size())
                                 : runs.front()->label;
        QCPGraph* curve = panel.addCurve(runs.front()->label, g.color, nullptr, g.style);
        curve->setName(name);
        curve->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, 5));
        curve->setData(x, mean, true);
        if (runs.size() > 1) {
            QCPGraph* low = panel.addCompanion(curve, Qt::transparent);
            QCPGraph* high = panel.addCompanion(curve, Qt::transparent);
            low->setPen(Qt::NoPen);
            high->setPen(Qt::NoPen);
            low->setData(x, lo, true);
            high->setData(x, hi, true);
            high->setBrush(draw::faded(g.color, 50));
            high->setChannelFillGraph(low);
        }
        // Evaluations not every run made (a run still going, a shorter run).
        std::set<double> shared(band.x.begin(), band.x.end());
        for (size_t k = 0; k < runs.size() && runs.size() > 1; ++k) {
            const auto xs = analysis::evalXs(*evals[k], in.xAxis);
            QVector<double> px, py;
            for (size_t i = 0; i < xs.size(); ++i) {
                const double v = accuracy ? (*evals[k])[i].val_accuracy : (*evals[k])[i].val_loss;
                if (!shared.count(xs[i]) && std::isfinite(v)) {
                    px.append(xs[i]);
                    py.append(v * scale);
                }
            }
            if (!px.isEmpty()) {
                QCPGraph* own = panel.addCompanion(curve, runs[k]->color);
                own->setLineStyle(QCPGraph::lsNone);
                own->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, 4));
                own->setData(px, py, true);
            }
        }
        any = any || !x.isEmpty();
    }
    panel.setMessage(!in.runs.empty() && !any ? QObject::tr("No evaluation yet") : QString());
    panel.fitUnlessUserView();
    return any;
}

bool drawMetric(PlotPanel& panel, PlotMetric metric, const PlotInput& in) {
    // What another metric left on the axes: a second axis, a log scale, arm names.
    panel.yAxis2->setVisible(false);
    setLogAxis(panel.yAxis, false);
    if (metric != PlotMetric::ArmBars &&
        !panel.xAxis->ticker().dynamicCast<QCPAxisTickerText>().isNull()) {
        panel.xAxis->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
        panel.xAxis->setSubTicks(true);
    }
    switch (metric) {
        case PlotMetric::TrainingLoss:
            drawLoss(panel, in);
            return !in.runs.empty();
        case PlotMetric::Validation:
        case PlotMetric::ValidationAccuracy:
            return drawValidationBand(panel, in, true);
        case PlotMetric::ValidationLoss:
            return drawValidationBand(panel, in, false);
        case PlotMetric::Time:
        case PlotMetric::StepTime:
            drawStepTime(panel, in, false);
            return !in.runs.empty();
        case PlotMetric::TimePerSample:
            drawStepTime(panel, in, true);
            return !in.runs.empty();
        case PlotMetric::Memory:
            return drawMemory(panel, in);
        case PlotMetric::LossScale:
            return drawLossScale(panel, in);
        case PlotMetric::LearningRate:
            return drawSeries(panel, in, StepMetric::Lr, "lr", QObject::tr("learning rate"), false,
                              finite);
        case PlotMetric::GradNorm:
            // Thinned norms are NaN between the recorded steps: gaps, not zeros.
            return drawSeries(panel, in, StepMetric::GradNorm, "grad-norm",
                              QObject::tr("gradient norm (unscaled, log axis)"), true, finite);
        case PlotMetric::DataWait:
            return drawSeries(panel, in, StepMetric::DataWaitMs, "data-wait",
                              QObject::tr("ms waiting for data per step"), false,
                              [](double v) { return v > 0; });
        case PlotMetric::ArmBars:
            drawArmBars(panel, in);
            return !in.groups.empty();
    }
    return false;
}

}  // namespace ampbench::ui
