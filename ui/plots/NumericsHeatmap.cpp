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
    map_->setColorScale(scale_);
    plot_->xAxis->setLabel(tr("optimizer step"));
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
    if (row < 0 || column < 0 || static_cast<size_t>(row) >= grid_.cells.size() ||
        static_cast<size_t>(column) >= grid_.steps.size()) {
        return NAN;
    }
    const auto* r = grid_.cells[static_cast<size_t>(row)][static_cast<size_t>(column)];
    if (!r) {
        return NAN;
    }
    double v = analysis::metricValue(*r, metric_);
    if (metric_ == NumericsMetric::Headroom) {
        v = std::clamp(v, -1.0, 40.0);  // −inf (non-finite) and +inf (all zero) at the ends
    }
    return v;
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
    const int rows = static_cast<int>(grid_.names.size());
    const int columns = static_cast<int>(grid_.steps.size());
    map_->data()->setSize(std::max(columns, 1), std::max(rows, 1));
    map_->data()->setRange(QCPRange(0, std::max(columns - 1, 0)),
                           QCPRange(0, std::max(rows - 1, 0)));
    for (int r = 0; r < rows; ++r) {
        for (int c = 0; c < columns; ++c) {
            map_->data()->setCell(c, r, cellValue(r, c));
        }
    }
    const bool headroom = metric_ == NumericsMetric::Headroom;
    QCPColorGradient gradient(headroom ? QCPColorGradient::gpThermal : QCPColorGradient::gpHot);
    if (headroom) {
        gradient = gradient.inverted();  // little headroom: hot
    }
    gradient.setNanHandling(QCPColorGradient::nhTransparent);
    map_->setGradient(gradient);
    map_->setDataRange(headroom ? QCPRange(-1, 40) : QCPRange(0, 1));
    scale_->axis()->setLabel(headroom ? tr("log2 headroom") : tr("share of values"));
    // Columns are steps (labelled with their numbers), rows tensors (by name).
    QSharedPointer<QCPAxisTickerText> xt(new QCPAxisTickerText);
    const int every = std::max(1, columns / 10);
    for (int c = 0; c < columns; c += every) {
        xt->addTick(c, QString::number(grid_.steps[static_cast<size_t>(c)]));
    }
    plot_->xAxis->setTicker(xt);
    labelRows();
    plot_->xAxis->setRange(-0.5, std::max(columns, 1) - 0.5);
    plot_->yAxis->setRange(-0.5, std::max(rows, 1) - 0.5);
    if (any) {
        worst_->setText(QString::fromStdString(
            analysis::worstLayersText(analysis::summarizeNumerics(rows_), 5)));
    }
    plot_->replot();
}

// As many tensor names as fit the plot's height without overlapping (every k-th
// row when they do not all fit; hovering a cell names any row).
void NumericsHeatmap::labelRows() {
    const int rows = static_cast<int>(grid_.names.size());
    const int line = QFontMetrics(plot_->yAxis->tickLabelFont()).height();
    const int height = plot_->height() - 4 * line;  // less the step axis and margins
    const int fit = std::max(1, height / std::max(1, line));
    const int every = std::max(1, (rows + fit - 1) / fit);
    QSharedPointer<QCPAxisTickerText> yt(new QCPAxisTickerText);
    for (int r = 0; r < rows; r += every) {
        yt->addTick(r, QString::fromStdString(grid_.names[static_cast<size_t>(r)]));
    }
    plot_->yAxis->setTicker(yt);
    rows_labelled_every_ = every;
}

void NumericsHeatmap::resizeEvent(QResizeEvent* event) {
    QWidget::resizeEvent(event);
    if (!grid_.names.empty()) {
        labelRows();
        plot_->replot(QCustomPlot::rpQueuedReplot);
    }
}

}  // namespace ampbench::ui
