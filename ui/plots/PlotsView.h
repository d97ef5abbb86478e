#pragma once
#include <QElapsedTimer>
#include <QList>
#include <QSet>
#include <QTimer>
#include <QWidget>

#include "ui/plots/CurveCache.h"
#include "ui/plots/PlotMetric.h"

class QCheckBox;
class QComboBox;
class QGridLayout;
class QLabel;
class QMenu;
class QScrollArea;
class QSlider;
class QToolButton;

namespace ampbench::ui {

class PlotLegend;
class PlotPanel;
class RunDataCache;
class Settings;

/// The live and comparison plots of the runs the cache holds, with their
/// controls (x-axis, smoothing, log-y, reset) and one legend beside them. Each
/// panel shows the metric the user picks from its title (kept in the settings);
/// a panel with nothing to show for the runs on show (no loss scaler, no
/// evaluation) is left out of the grid, and a double click maximises a panel or
/// restores the grid. Redraws are coalesced by a single-shot timer: at most one per
/// kRedrawIntervalMs however often rows arrive. GUI thread only.
class PlotsView : public QWidget {
    Q_OBJECT
  public:
    static constexpr int kRedrawIntervalMs = 40;  // ≤ 25 redraws per second
    static constexpr int kPanels = 6;
    static constexpr int kColumns = 3;  ///< the most columns of panels
    /// Narrower panels than this go to two columns (a laptop's screen).
    static constexpr int kReadableWidth = 280;
    /// The columns of panels now: kColumns where each gets kReadableWidth, else 2.
    int columns() const { return columns_; }

    PlotsView(RunDataCache& cache, Settings& settings, QWidget* parent = nullptr);

    /// Asks for a redraw; several requests within the interval make one.
    void scheduleRedraw();
    /// Redraws every panel now (tests, benchmarks).
    void redrawNow();
    void resetViews();

    PlotPanel* panel(int index) const { return panels_.value(index); }
    /// What panel `index` was asked to show (possibly an auto metric) and, after
    /// the last redraw, what it draws.
    PlotMetric panelMetric(int index) const { return metrics_.value(index); }
    PlotMetric drawnMetric(int index) const { return drawn_.value(index); }
    void setPanelMetric(int index, PlotMetric metric);
    /// Whether panel `index` is in the grid (it has something to show, and no other
    /// panel is maximised).
    bool isPanelShown(int index) const;
    /// Maximises panel `index`, or restores the grid for -1.
    void setMaximised(int index);
    int maximised() const { return maximised_; }
    PlotLegend* legend() const { return legend_; }
    /// Hides (or shows) the run `label` in every panel and the legend.
    void setRunHidden(const QString& label, bool hidden);

    // The panels in their default places (each may show another metric).
    PlotPanel* lossPlot() const { return panels_[0]; }
    PlotPanel* validationPlot() const { return panels_[1]; }
    PlotPanel* stepTimePlot() const { return panels_[2]; }
    PlotPanel* memoryPlot() const { return panels_[3]; }
    PlotPanel* lossScalePlot() const { return panels_[4]; }
    PlotPanel* armBarsPlot() const { return panels_[5]; }
    /// Milliseconds the last redraw took (rebuilding the curves and painting).
    double lastRedrawMs() const { return lastRedrawMs_; }

  Q_SIGNALS:
    void redrawn();

  protected:
    /// A new palette (the desktop turned dark or light) redraws with its shades.
    void changeEvent(QEvent* event) override;
    /// Three columns of panels where each gets kReadableWidth, two where not.
    void resizeEvent(QResizeEvent* event) override;

  private:
    void chooseMetric(int index, const QPoint& globalPos);
    void addMetricMenu(int index, QMenu* menu);
    /// Puts the panels that are shown into the grid, in order.
    void layoutPanels();
    void saveMetrics() const;

    RunDataCache& cache_;
    Settings& settings_;
    QComboBox* xAxis_ = nullptr;
    QSlider* smoothing_ = nullptr;
    QLabel* smoothingValue_ = nullptr;
    QLabel* emptyHint_ = nullptr;  // shown while no run is ticked
    int columns_ = kColumns;
    QCheckBox* logY_ = nullptr;
    QToolButton* legendButton_ = nullptr;
    QGridLayout* grid_ = nullptr;
    QScrollArea* scroll_ = nullptr;  // holds the grid; scrolls rows that do not fit
    PlotLegend* legend_ = nullptr;
    QList<PlotPanel*> panels_;
    QList<PlotMetric> metrics_;  // asked for, per panel
    QList<PlotMetric> drawn_;    // resolved at the last redraw
    QList<bool> hasData_;        // at the last redraw
    QSet<QString> hidden_;       // run labels the user hid
    int maximised_ = -1;
    CurveCache curves_;  // built curves of unchanged runs, reused across redraws
    QTimer redraw_;      // single-shot; running = a redraw is due
    double lastRedrawMs_ = 0;
};

}  // namespace ampbench::ui
