#pragma once
#include <QWidget>
#include <vector>

#include "core/analysis/LayerNumerics.h"

class QComboBox;
class QCustomPlot;
class QCPColorMap;
class QCPColorScale;
class QLabel;

namespace ampbench::ui {

/// A run's per-layer numerics as a heatmap, tensors × steps, coloured by the share of
/// values under fp16's smallest subnormal or normal, or by the headroom to overflow;
/// hovering a cell shows its numbers; the worst layers are listed below. Hidden
/// data (no rows) shows a line saying how to record them. GUI thread only.
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
    /// The cell's value as coloured (NaN where not observed).
    double cellValue(int row, int column) const;
    QCustomPlot* plot() const { return plot_; }
    QString worstText() const;

    /// Rows between two labelled tensor names (1: every name shown).
    int rowsLabelledEvery() const { return rows_labelled_every_; }

  protected:
    void resizeEvent(QResizeEvent* event) override;

  private:
    void redraw();
    void labelRows();
    int rows_labelled_every_ = 1;
    std::vector<run::NumericsRecord> rows_;
    analysis::NumericsGrid grid_;
    analysis::NumericsMetric metric_ = analysis::NumericsMetric::UnderflowSubnormal;
    QComboBox* metric_box_ = nullptr;
    QCustomPlot* plot_ = nullptr;
    QCPColorMap* map_ = nullptr;
    QCPColorScale* scale_ = nullptr;
    QLabel* worst_ = nullptr;
    QLabel* empty_ = nullptr;
};

}  // namespace ampbench::ui
