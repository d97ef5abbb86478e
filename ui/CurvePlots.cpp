#include "ui/CurvePlots.h"

#include "core/analysis/Statistics.h"
#include "ui/Palette.h"
#include "ui/PlotInput.h"
#include "ui/PlotPanel.h"
#include "ui/RunDataCache.h"

namespace ampbench::ui {

using analysis::StepMetric;

QVector<double> toQVector(const std::vector<double>& v) {
    return QVector<double>(v.begin(), v.end());
}

CurveData stepCurve(
    const PlotInput& in, const PlotRun& r, const QString& name, const QString& options,
    const std::function<std::vector<double>(const std::vector<train::StepRecord>&)>& values) {
    const auto& steps = r.series->steps;
    auto build = [&] { return makeCurveData(analysis::stepXs(steps, in.xAxis), values(steps)); };
    if (!in.curves) {
        return build();
    }
    return in.curves->get(r.series->row.id, name, r.series->revision,
                          QStringLiteral("x%1 %2").arg(static_cast<int>(in.xAxis)).arg(options),
                          build);
}

void setXAxis(PlotPanel& panel, analysis::XAxis axis) {
    const bool time = axis == analysis::XAxis::WallSeconds;
    const bool isTime = !panel.xAxis->ticker().dynamicCast<QCPAxisTickerTime>().isNull();
    if (time != isTime) {
        if (time) {
            QSharedPointer<QCPAxisTickerTime> ticker(new QCPAxisTickerTime);
            ticker->setTimeFormat("%m:%s");
            panel.xAxis->setTicker(ticker);
        } else {
            panel.xAxis->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
        }
    }
    panel.xAxis->setLabel(time ? QStringLiteral("wall time (m:s)")
                               : QString::fromStdString(analysis::toString(axis)));
}

void setLogAxis(QCPAxis* axis, bool log, double base) {
    const bool isLog = axis->scaleType() == QCPAxis::stLogarithmic;
    if (log == isLog) {
        return;
    }
    if (log) {
        QSharedPointer<QCPAxisTickerLog> ticker(new QCPAxisTickerLog);
        ticker->setLogBase(base);
        axis->setScaleType(QCPAxis::stLogarithmic);
        axis->setTicker(ticker);
    } else {
        axis->setScaleType(QCPAxis::stLinear);
        axis->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
    }
}

void drawLoss(PlotPanel& panel, const PlotInput& in) {
    panel.clearCurves();
    setXAxis(panel, in.xAxis);
    setLogAxis(panel.yAxis, in.logY);
    panel.yAxis->setLabel(in.smoothing > 0 ? QStringLiteral("training loss (EMA; raw faded)")
                                           : QStringLiteral("training loss"));
    const QString log = in.logY ? QStringLiteral("log") : QString();
    for (const PlotRun& r : in.runs) {
        CurveData raw = stepCurve(in, r, "loss", log, [&](const auto& steps) {
            auto v = analysis::stepValues(steps, StepMetric::Loss);
            return in.logY ? analysis::forLogAxis(std::move(v)) : v;
        });
        CurveData smooth = raw;
        if (in.smoothing > 0) {
            smooth = stepCurve(
                in, r, "loss-ema", log + QString::number(in.smoothing), [&](const auto& steps) {
                    auto v =
                        analysis::ema(analysis::stepValues(steps, StepMetric::Loss), in.smoothing);
                    return in.logY ? analysis::forLogAxis(std::move(v)) : v;
                });
        }
        QCPGraph* curve = panel.addCurve(r.label, r.color);
        if (in.smoothing > 0) {
            QCPGraph* faint = panel.addCompanion(curve, faded(r.color));
            faint->setLayer("grid");  // behind every smoothed curve
            faint->setData(raw);
        }
        curve->setData(smooth);

        const auto skipped = analysis::skippedIndices(r.series->steps);
        if (!skipped.empty()) {
            QCPGraph* marks = panel.addCompanion(curve, QColor(200, 30, 30));
            marks->setLineStyle(QCPGraph::lsNone);
            marks->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCross, 8));
            QVector<double> mx, my;
            for (size_t i : skipped) {
                const auto point = smooth->at(static_cast<int>(i));
                mx.append(point->key);
                my.append(point->value);
            }
            marks->setData(mx, my, true);
        }
    }
    panel.setMessage(in.runs.empty() ? QObject::tr("Tick runs on the left to plot them")
                                     : QString());
    panel.fitUnlessUserView();
}

void drawValidation(PlotPanel& panel, const PlotInput& in) {
    panel.clearCurves();
    setXAxis(panel, in.xAxis);
    panel.yAxis->setLabel(QStringLiteral("val accuracy % (solid)"));
    panel.yAxis2->setVisible(true);
    panel.yAxis2->setLabel(QStringLiteral("val loss (dashed)"));
    bool any = false;
    for (const PlotRun& r : in.runs) {
        const auto& evals = r.series->evals;
        if (evals.empty()) {
            continue;
        }
        any = true;
        const auto x = toQVector(analysis::evalXs(evals, in.xAxis));
        QVector<double> acc, loss;
        for (const auto& e : evals) {
            acc.append(e.val_accuracy * 100.0);
            loss.append(e.val_loss);
        }
        QCPGraph* curve = panel.addCurve(r.label, r.color);
        curve->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, 5));
        curve->setData(x, acc, true);
        QCPGraph* lossCurve = panel.addCompanion(curve, r.color, panel.yAxis2);
        lossCurve->setPen(QPen(r.color, 1.2, Qt::DashLine));
        lossCurve->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssSquare, 4));
        lossCurve->setData(x, loss, true);
    }
    panel.setMessage(!in.runs.empty() && !any ? QObject::tr("No evaluation yet") : QString());
    panel.fitUnlessUserView();
}

void drawMemory(PlotPanel& panel, const PlotInput& in) {
    panel.clearCurves();
    setXAxis(panel, in.xAxis);
    panel.yAxis->setLabel(QStringLiteral("allocated MiB (RSS on CPU)"));
    for (const PlotRun& r : in.runs) {
        QCPGraph* curve = panel.addCurve(r.label, r.color);
        curve->setData(stepCurve(in, r, "memory", {}, [](const auto& steps) {
            return analysis::stepValues(steps, StepMetric::MemAllocatedMiB);
        }));
    }
    panel.fitUnlessUserView();
}

void drawLossScale(PlotPanel& panel, const PlotInput& in) {
    panel.clearCurves();
    setXAxis(panel, in.xAxis);
    setLogAxis(panel.yAxis, true, 2.0);
    panel.yAxis->setLabel(QStringLiteral("loss scale"));
    bool any = false;
    for (const PlotRun& r : in.runs) {
        const auto& steps = r.series->steps;
        const auto scale = analysis::stepValues(steps, StepMetric::LossScale);
        if (std::all_of(scale.begin(), scale.end(), [](double s) { return s == 1.0; })) {
            continue;  // fp32 and bf16 arms: no scaler
        }
        any = true;
        QCPGraph* curve = panel.addCurve(r.label, r.color);
        curve->setLineStyle(QCPGraph::lsStepLeft);
        curve->setData(stepCurve(in, r, "loss-scale", {},
                                 [&](const auto&) { return analysis::forLogAxis(scale); }));
    }
    panel.setMessage(!in.runs.empty() && !any ? QObject::tr("No loss scaling (fp32 and bf16 runs)")
                                              : QString());
    panel.fitUnlessUserView();
    if (!any && !panel.userView()) {
        panel.xAxis->setRange(0, 1);
        panel.yAxis->setRange(1, 65536);
    }
}

}  // namespace ampbench::ui
