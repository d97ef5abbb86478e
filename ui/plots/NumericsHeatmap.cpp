#include "ui/plots/NumericsHeatmap.h"

#include <qcustomplot.h>

#include <QComboBox>
#include <QFontDatabase>
#include <QFontMetrics>
#include <QHBoxLayout>
#include <QLabel>
#include <QToolTip>
#include <QVBoxLayout>
#include <cmath>

#include "ui/draw/NumericsMap.h"

namespace ampbench::ui {

using analysis::NumericsMetric;

NumericsHeatmap::NumericsHeatmap(QWidget* parent) : QWidget(parent) {
    setObjectName("numericsHeatmap");
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    auto* bar = new QHBoxLayout;
    bar->addWidget(new QLabel(tr("Per-layer numerics:")));
    metric_box_ = new QComboBox;
    metric_box_->setObjectName("numericsMetric");
    metric_box_->addItem(tr("share under fp16's smallest subnormal (2^-24)"));
    metric_box_->addItem(tr("share under fp16's smallest normal (2^-14)"));
    metric_box_->addItem(tr("headroom to fp16 overflow (log2 65504/abs-max)"));
    metric_box_->setToolTip(
        tr("Gradients as fp16 held them (unscaled \u00d7 the loss scale), "
           "module outputs in the dtype autocast gave them"));
    bar->addWidget(metric_box_, 1);
    layout->addLayout(bar);
    empty_ =
        new QLabel(tr("No per-layer numerics for this run: set numerics_every in the spec "
                      "(optimizer steps between records)."));
    empty_->setWordWrap(true);
    layout->addWidget(empty_);
    plot_ = new QCustomPlot;
    plot_->setObjectName("numericsPlot");
    plot_->setMinimumHeight(220);
    plot_->setMouseTracking(true);
    map_ = new QCPColorMap(plot_->xAxis, plot_->yAxis);
    scale_ = new QCPColorScale(plot_);
    plot_->plotLayout()->addElement(0, 1, scale_);
    layout->addWidget(plot_, 1);
    worst_ = new QLabel;
    worst_->setObjectName("numericsWorst");
    worst_->setTextFormat(Qt::PlainText);
    worst_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));  // a text table
    worst_->setWordWrap(true);
    layout->addWidget(worst_);
    connect(metric_box_, &QComboBox::currentIndexChanged, this,
            [this](int i) { setMetric(static_cast<NumericsMetric>(i)); });
    connect(plot_, &QCustomPlot::mouseMove, this, [this](QMouseEvent* e) {
        const QString text = textAt(e->pos());
        if (text.isEmpty()) {
            QToolTip::hideText();
        } else {
            QToolTip::showText(plot_->mapToGlobal(e->pos()), text, plot_);
        }
    });
    redraw();
}

void NumericsHeatmap::setRows(std::vector<run::NumericsRecord> rows) {
    rows_ = std::move(rows);
    grid_ = analysis::numericsGrid(rows_);
    redraw();
}

void NumericsHeatmap::setMetric(NumericsMetric metric) {
    metric_ = metric;
    if (metric_box_->currentIndex() != static_cast<int>(metric)) {
        metric_box_->setCurrentIndex(static_cast<int>(metric));
    }
    redraw();
}

double NumericsHeatmap::cellValue(int row, int column) const {
    if (row < 0 || column < 0) {
        return NAN;
    }
    return draw::numericsCellValue(grid_, metric_, static_cast<size_t>(row),
                                   static_cast<size_t>(column));
}

QString NumericsHeatmap::textAt(const QPoint& pos) const {
    if (grid_.names.empty()) {
        return {};
    }
    const double x = plot_->xAxis->pixelToCoord(pos.x());
    const double y = plot_->yAxis->pixelToCoord(pos.y());
    const long column = std::lround(x);
    const long row = std::lround(y);
    if (column < 0 || row < 0 || static_cast<size_t>(column) >= grid_.steps.size() ||
        static_cast<size_t>(row) >= grid_.names.size()) {
        return {};
    }
    return QString::fromStdString(
        analysis::cellText(grid_, static_cast<size_t>(row), static_cast<size_t>(column)));
}

QString NumericsHeatmap::worstText() const {
    return worst_->text();
}

void NumericsHeatmap::redraw() {
    const bool any = !grid_.names.empty();
    empty_->setVisible(!any);
    plot_->setVisible(any);
    worst_->setVisible(any);
    labelRows();
    if (any) {
        worst_->setText(QString::fromStdString(
            analysis::worstLayersText(analysis::summarizeNumerics(rows_), 5)));
    }
    plot_->replot();
}

// Draws the map with as many tensor names as fit the plot's height (every k-th
// row when they do not all fit; hovering a cell names any row).
void NumericsHeatmap::labelRows() {
    const int line = QFontMetrics(plot_->yAxis->tickLabelFont()).height();
    rows_labelled_every_ =
        draw::numericsLabelStride(grid_.names.size(), plot_->height() - 4 * line, line);
    draw::drawNumericsMap(*plot_, *map_, *scale_, grid_, metric_, rows_labelled_every_);
}

void NumericsHeatmap::resizeEvent(QResizeEvent* event) {
    QWidget::resizeEvent(event);
    if (!grid_.names.empty()) {
        labelRows();
        plot_->replot(QCustomPlot::rpQueuedReplot);
    }
}

}  // namespace ampbench::ui
