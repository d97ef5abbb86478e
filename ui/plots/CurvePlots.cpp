#include "ui/plots/CurvePlots.h"

#include <QObject>
#include <algorithm>
#include <utility>

#include "core/analysis/Statistics.h"
#include "ui/data/RunDataCache.h"
#include "ui/draw/Palette.h"
#include "ui/plots/PlotInput.h"
#include "ui/plots/PlotPanel.h"

namespace ampbench::ui {

using analysis::StepMetric;

QVector<double> toQVector(const std::vector<double>& v) {
    return QVector<double>(v.begin(), v.end());
}

CurvePtr stepCurve(const PlotInput& in, const PlotRun& r, const QString& name, StepMetric metric,
                   bool log) {
    const auto& steps = r.series->steps;
    if (!in.curves) {
        auto y = analysis::stepValues(steps, metric);
        return makeCurve(analysis::stepXs(steps, in.xAxis),
                         log ? analysis::forLogAxis(std::move(y)) : y);
    }
    return in.curves->stepCurve(
        r.series->row.id, name,
        QStringLiteral("x%1%2").arg(static_cast<int>(in.xAxis)).arg(log ? " log" : ""), steps,
        in.xAxis, metric, log);
}

CurvePtr sharedStepCurve(const PlotInput& in, const PlotRun& r, const QString& name,
                         StepMetric metric) {
    const int group = std::max(1, r.series->fused_group);
    if (group == 1) {
        return stepCurve(in, r, name, metric);
    }
    return derivedCurve(in, r, name + " shared", QString::number(group), [&] {
        auto y = analysis::stepValues(r.series->steps, metric);
        for (double& v : y) {
            v /= group;
        }
        return makeCurve(analysis::stepXs(r.series->steps, in.xAxis), std::move(y));
    });
}

CurvePtr derivedCurve(const PlotInput& in, const PlotRun& r, const QString& name,
                      const QString& options, const std::function<QSharedPointer<Curve>()>& build) {
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
    const QString smoothing = log + QString::number(in.smoothing);
    for (const PlotRun& r : in.runs) {
        // The loss as recorded grows with the run; the log and EMA views are
        // recomputed from it (contiguous doubles) only when the run changed.
        const CurvePtr linear = stepCurve(in, r, "loss", StepMetric::Loss);
        const CurvePtr raw = !in.logY ? linear : derivedCurve(in, r, "loss-log", log, [&] {
            return makeCurve(linear->points().x, analysis::forLogAxis(linear->points().y));
        });
        const CurvePtr smooth =
            !(in.smoothing > 0) ? raw : derivedCurve(in, r, "loss-ema", smoothing, [&] {
                auto v = analysis::ema(linear->points().y, in.smoothing);
                return makeCurve(linear->points().x,
                                 in.logY ? analysis::forLogAxis(std::move(v)) : v);
            });
        QCPGraph* curve = panel.addCurve(r.label, r.color, nullptr, r.style);
        if (in.smoothing > 0) {
            QCPGraph* faint = panel.addCompanion(curve, draw::faded(r.color));
            faint->setLayer("grid");  // behind every smoothed curve
            panel.setCurve(faint, raw);
        }
        panel.setCurve(curve, smooth);

        const CurvePtr skipped = derivedCurve(in, r, "loss-skipped", smoothing, [&] {
            std::vector<double> x, y;
            const auto& points = smooth->points();
            // Read with the loss's columns when it was just rebuilt (a new x-axis).
            const auto* columns =
                in.curves ? in.curves->readColumns(r.series->row.id, r.series->steps.size())
                          : nullptr;
            for (size_t i :
                 columns ? columns->skipped : analysis::skippedIndices(r.series->steps)) {
                if (i < smooth->size()) {
                    x.push_back(points.x[i]);
                    y.push_back(points.y[i]);
                }
            }
            return makeCurve(std::move(x), std::move(y));
        });
        if (!skipped->isEmpty()) {
            QCPGraph* marks = panel.addCompanion(curve, QColor(200, 30, 30));
            marks->setLineStyle(QCPGraph::lsNone);
            marks->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCross, 8));
            panel.setCurve(marks, skipped);
        }
    }
    panel.setMessage(in.runs.empty() ? QObject::tr("Tick runs on the left to plot them")
                                     : QString());
    panel.fitUnlessUserView();
}

bool drawMemory(PlotPanel& panel, const PlotInput& in) {
    panel.clearCurves();
    setXAxis(panel, in.xAxis);
    std::vector<analysis::MemoryMeasure> measures;
    for (const PlotGroup& g : in.groups) {
        measures.push_back(g.memory);
    }
    // The dashed peak ends at the figure the summary table and the report give.
    const std::string measure = analysis::memoryLabel(measures);
    panel.yAxis->setLabel(
        measure == "peak allocated"    ? QObject::tr("MiB allocated: after each step, peak dashed")
        : measure == "peak in tensors" ? QObject::tr("MiB in tensors: after each step, peak dashed")
        : measure == "peak RSS"
            ? QObject::tr("MiB resident (process): after each step, peak dashed")
            : QObject::tr("MiB (measured differently); peak dashed"));
    bool any = false;
    for (const PlotRun& r : in.runs) {
        QCPGraph* curve = panel.addCurve(r.label, r.color, nullptr, r.style);
        const CurvePtr now = sharedStepCurve(in, r, "memory", StepMetric::MemAllocatedMiB);
        panel.setCurve(curve, now);
        QCPGraph* peak = panel.addCompanion(curve, r.color);
        peak->setPen(QPen(r.color, 1.2, Qt::DashLine));
        const CurvePtr high = sharedStepCurve(in, r, "memory-peak", StepMetric::MemPeakMiB);
        panel.setCurve(peak, high);
        const auto& y = high->points().y;
        any = any || std::any_of(y.begin(), y.end(), [](double v) { return v > 0; });
    }
    panel.fitUnlessUserView();
    return any;
}

bool drawLossScale(PlotPanel& panel, const PlotInput& in) {
    panel.clearCurves();
    setXAxis(panel, in.xAxis);
    setLogAxis(panel.yAxis, true, 2.0);
    panel.yAxis->setLabel(QStringLiteral("loss scale"));
    bool any = false;
    for (const PlotRun& r : in.runs) {
        const CurvePtr scale = stepCurve(in, r, "loss-scale", StepMetric::LossScale, true);
        const auto& y = scale->points().y;
        if (std::all_of(y.begin(), y.end(), [](double s) { return s == 1.0; })) {
            continue;  // fp32 and bf16 arms: no scaler
        }
        any = true;
        QCPGraph* curve = panel.addCurve(r.label, r.color, nullptr, r.style);
        curve->setLineStyle(QCPGraph::lsStepLeft);
        panel.setCurve(curve, scale);
    }
    panel.setMessage(!in.runs.empty() && !any ? QObject::tr("No loss scaling (fp32 and bf16 runs)")
                                              : QString());
    panel.fitUnlessUserView();
    if (!any && !panel.userView()) {
        panel.xAxis->setRange(0, 1);
        panel.yAxis->setRange(1, 65536);
    }
    return any;
}

}  // namespace ampbench::ui
