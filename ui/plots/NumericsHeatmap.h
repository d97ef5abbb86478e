#pragma once
#include <QWidget>
#include <vector>

#include "core/analysis/LayerNumerics.h"
#include "core/analysis/ScaleHistory.h"

class QComboBox;
class QCustomPlot;
class QCPColorMap;
class QCPColorScale;
class QLabel;
class QScrollArea;

namespace ampbench::ui {

/// A run's per-layer numerics as a heatmap, tensors × steps, coloured by the share of
/// values under the smallest subnormal or normal of the format each tensor is measured
/// against, by the headroom to its largest, or by the share past it (saturated); the
/// metric menu names the formats present. Hovering a cell shows its numbers, hovering
/// a tensor's name (elided in the middle when long) shows it whole; the worst layers
/// are listed below. A run with FP8 casts also gets its per-tensor scales over the
/// steps (by role, the saturated tensors named; hovering names a step's numbers).
/// No rows: a line saying how to record them. GUI thread only.
class NumericsHeatmap : public QWidget {
    Q_OBJECT
  public:
    explicit NumericsHeatmap(QWidget* parent = nullptr);

    void setRows(std::vector<run::NumericsRecord> rows);
    void setMetric(analysis::NumericsMetric metric);
    analysis::NumericsMetric metric() const { return metric_; }
    const analysis::NumericsGrid& grid() const { return grid_; }
    /// The tooltip of the cell under a point of the plot, empty outside the cells.
    QString textAt(const QPoint& plot_pos) const;
    /// The whole name of the tensor whose label is under a point of the plot (left of
    /// the cells), empty elsewhere.
    QString labelAt(const QPoint& plot_pos) const;
    /// The label row `row` is shown with (elided), empty for a row not labelled.
    QString rowLabel(int row) const;
    /// The metric menu's text for `metric`.
    QString metricText(analysis::NumericsMetric metric) const;
    /// The cell's value as coloured (NaN where not observed).
    double cellValue(int row, int column) const;
    QCustomPlot* plot() const { return plot_; }
    QString worstText() const;
    /// The FP8 casts' scale history, shown only when the rows hold casts.
    QCustomPlot* scalePlot() const { return scale_plot_; }
    const analysis::ScaleHistory& scales() const { return scales_; }
    /// The numbers at the step nearest a point of the scale plot, empty without casts.
    QString scaleTextAt(const QPoint& plot_pos) const;

    /// Rows between two labelled tensor names (1: every name shown).
    int rowsLabelledEvery() const { return rows_labelled_every_; }

  protected:
    void resizeEvent(QResizeEvent* event) override;
    bool eventFilter(QObject* watched, QEvent* event) override;

  private:
    void redraw();
    void labelRows();
    void nameMetrics();
    void fitWorst();
    int rows_labelled_every_ = 1;
    int label_width_ = 0;  // pixels a tensor's name may take (0: whole)
    std::vector<run::NumericsRecord> rows_;
    analysis::NumericsGrid grid_;
    analysis::ScaleHistory scales_;
    analysis::NumericsMetric metric_ = analysis::NumericsMetric::UnderflowSubnormal;
    QComboBox* metric_box_ = nullptr;
    QCustomPlot* plot_ = nullptr;
    QCPColorMap* map_ = nullptr;
    QCPColorScale* scale_ = nullptr;
    QLabel* worst_ = nullptr;
    QScrollArea* worst_area_ = nullptr;  // holds worst_
    QLabel* empty_ = nullptr;
    QCustomPlot* scale_plot_ = nullptr;
};

}  // namespace ampbench::ui
