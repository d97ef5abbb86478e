#pragma once
#include <QElapsedTimer>
#include <QTimer>
#include <QWidget>

#include "ui/plots/CurveCache.h"

class QCheckBox;
class QComboBox;
class QLabel;
class QSlider;

namespace ampbench::ui {

class PlotPanel;
class RunDataCache;
class Settings;

/// The live and comparison plots of the runs the cache holds, with their
/// controls (x-axis, smoothing, log-y, reset). Redraws are coalesced by a
/// single-shot timer: at most one per kRedrawIntervalMs however often rows
/// arrive. GUI thread only.
class PlotsView : public QWidget {
    Q_OBJECT
  public:
    static constexpr int kRedrawIntervalMs = 40;  // ≤ 25 redraws per second

    PlotsView(RunDataCache& cache, Settings& settings, QWidget* parent = nullptr);

    /// Asks for a redraw; several requests within the interval make one.
    void scheduleRedraw();
    /// Redraws every panel now (tests, benchmarks).
    void redrawNow();
    void resetViews();

    PlotPanel* lossPlot() const { return loss_; }
    PlotPanel* validationPlot() const { return validation_; }
    PlotPanel* stepTimePlot() const { return stepTime_; }
    PlotPanel* memoryPlot() const { return memory_; }
    PlotPanel* lossScalePlot() const { return lossScale_; }
    PlotPanel* armBarsPlot() const { return bars_; }
    /// Milliseconds the last redraw took (rebuilding the curves and painting).
    double lastRedrawMs() const { return lastRedrawMs_; }

  Q_SIGNALS:
    void redrawn();

  private:
    RunDataCache& cache_;
    Settings& settings_;
    QComboBox* xAxis_ = nullptr;
    QSlider* smoothing_ = nullptr;
    QLabel* smoothingValue_ = nullptr;
    QCheckBox* logY_ = nullptr;
    PlotPanel* loss_ = nullptr;
    PlotPanel* validation_ = nullptr;
    PlotPanel* stepTime_ = nullptr;
    PlotPanel* memory_ = nullptr;
    PlotPanel* lossScale_ = nullptr;
    PlotPanel* bars_ = nullptr;
    CurveCache curves_;  // built curves of unchanged runs, reused across redraws
    QTimer redraw_;      // single-shot; running = a redraw is due
    double lastRedrawMs_ = 0;
};

}  // namespace ampbench::ui
