#include "ui/plots/PlotMetric.h"

#include <QObject>
#include <cmath>
#include <set>

#include "ui/data/RunDataCache.h"
#include "ui/plots/PlotInput.h"

namespace ampbench::ui {
namespace {

struct MetricInfo {
    PlotMetric metric;
    const char* key;
    const char* name;
    const char* title;
};

const MetricInfo kMetrics[] = {
    {PlotMetric::TrainingLoss, "loss", "Training loss", "Training loss"},
    {PlotMetric::Validation, "validation", "Validation (accuracy, or loss without one)",
     "Validation"},
    {PlotMetric::ValidationAccuracy, "val-accuracy", "Validation accuracy", "Validation accuracy"},
    {PlotMetric::ValidationLoss, "val-loss", "Validation loss", "Validation loss"},
    {PlotMetric::Time, "time", "Time (per sample when accumulation differs)", "Time"},
    {PlotMetric::StepTime, "step-time", "Step time", "Step time"},
    {PlotMetric::TimePerSample, "time-per-sample", "Time per sample", "Time per sample"},
    {PlotMetric::Memory, "memory", "Memory over time", "Memory over time"},
    {PlotMetric::LossScale, "loss-scale", "Loss scale",
     "Loss scale (skipped steps \u00d7 on the loss)"},
    {PlotMetric::LearningRate, "lr", "Learning rate", "Learning rate"},
    {PlotMetric::GradNorm, "grad-norm", "Gradient norm", "Gradient norm (unscaled)"},
    {PlotMetric::DataWait, "data-wait", "Waiting for data", "Waiting for data per step"},
    {PlotMetric::ArmBars, "arm-bars", "Throughput and peak memory per arm",
     "Throughput and peak memory per arm"},
};

const MetricInfo& info(PlotMetric metric) {
    for (const MetricInfo& i : kMetrics) {
        if (i.metric == metric) {
            return i;
        }
    }
    return kMetrics[0];
}

/// Whether some run on show evaluated with an accuracy (regression has none).
bool hasAccuracy(const PlotInput& in) {
    for (const PlotRun& r : in.runs) {
        for (const auto& e : r.series->evals) {
            if (std::isfinite(e.val_accuracy)) {
                return true;
            }
        }
    }
    return false;
}

/// Whether the runs on show take different numbers of samples per optimizer step.
bool samplesPerStepDiffer(const PlotInput& in) {
    std::set<int64_t> perStep;
    for (const PlotRun& r : in.runs) {
        const auto& steps = r.series->steps;
        if (!steps.empty() && steps.front().step > 0) {
            perStep.insert(steps.front().samples / steps.front().step);
        }
    }
    return perStep.size() > 1;
}

}  // namespace

const QList<PlotMetric>& allPlotMetrics() {
    static const QList<PlotMetric> all = [] {
        QList<PlotMetric> out;
        for (const MetricInfo& i : kMetrics) {
            out.append(i.metric);
        }
        return out;
    }();
    return all;
}

QString metricName(PlotMetric metric) {
    return QObject::tr(info(metric).name);
}

QString metricTitle(PlotMetric metric) {
    return QObject::tr(info(metric).title);
}

QString metricKey(PlotMetric metric) {
    return QString::fromLatin1(info(metric).key);
}

PlotMetric metricFromKey(const QString& key, PlotMetric fallback) {
    for (const MetricInfo& i : kMetrics) {
        if (key == QLatin1String(i.key)) {
            return i.metric;
        }
    }
    return fallback;
}

PlotMetric resolveMetric(PlotMetric metric, const PlotInput& in) {
    switch (metric) {
        case PlotMetric::Validation:
            return hasAccuracy(in) || in.runs.empty() ? PlotMetric::ValidationAccuracy
                                                      : PlotMetric::ValidationLoss;
        case PlotMetric::Time:
            return samplesPerStepDiffer(in) ? PlotMetric::TimePerSample : PlotMetric::StepTime;
        default:
            return metric;
    }
}

}  // namespace ampbench::ui
