#pragma once
// What a plot panel shows. The user picks one per panel; "auto" choices resolve
// against the runs on show (accuracy or loss, time per step or per sample).
#include <QList>
#include <QString>

namespace ampbench::ui {

struct PlotInput;

enum class PlotMetric {
    TrainingLoss,
    Validation,  ///< auto: accuracy when the runs evaluated one, else loss
    ValidationAccuracy,
    ValidationLoss,
    Time,  ///< auto: per sample when the arms' samples per step differ, else per step
    StepTime,
    TimePerSample,
    Memory,
    LossScale,
    LearningRate,
    GradNorm,
    DataWait,
    ArmBars,
};

/// Every metric, in the order the panel's menu lists them.
const QList<PlotMetric>& allPlotMetrics();
/// The menu's name: "Validation (accuracy or loss)".
QString metricName(PlotMetric metric);
/// A panel's title for what it draws: "Validation accuracy".
QString metricTitle(PlotMetric metric);
/// The key kept in the settings ("val-accuracy"), and back (`fallback` when unknown).
QString metricKey(PlotMetric metric);
PlotMetric metricFromKey(const QString& key, PlotMetric fallback);
/// What an auto metric means for these runs; other metrics are themselves.
PlotMetric resolveMetric(PlotMetric metric, const PlotInput& input);

}  // namespace ampbench::ui
