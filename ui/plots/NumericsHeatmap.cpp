#include "ui/plots/NumericsHeatmap.h"

#include <qcustomplot.h>

#include <QComboBox>
#include <QFontDatabase>
#include <QFontMetrics>
#include <QHBoxLayout>
#include <QLabel>
#include <QScrollArea>
#include <QScrollBar>
#include <QSplitter>
#include <QToolTip>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

#include "ui/draw/NumericsMap.h"
#include "ui/draw/ScaleHistoryPlot.h"

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
    // Labels naming several formats are long: the menu shows them whole, the box elides.
    metric_box_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    metric_box_->setMinimumContentsLength(24);
    for (int i = 0; i < 4; ++i) {
        metric_box_->addItem(QString());  // named by nameMetrics(), after the formats present
    }
    nameMetrics();
    metric_box_->setToolTip(
        tr("Each tensor against the format it is held in: gradients as the arm held them "
           "(unscaled \u00d7 the loss scale), module outputs in the dtype autocast gave them, "
           "an FP8 layer's casts at their scale in e4m3 or e5m2. An fp32 arm is measured "
           "against fp16 as the reference: would its tensors fit in fp16?"));
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
    plot_->installEventFilter(this);  // its height decides how many names fit
    scale_plot_ = new QCustomPlot;
    scale_plot_->setObjectName("numericsScales");
    scale_plot_->setMinimumHeight(160);
    scale_plot_->setMouseTracking(true);
    // The heatmap and the scales share the height as the reader drags it.
    auto* plots = new QSplitter(Qt::Vertical);
    plots->setObjectName("numericsPlots");
    plots->setChildrenCollapsible(false);
    plots->addWidget(plot_);
    plots->addWidget(scale_plot_);
    plots->setStretchFactor(0, 1);
    plots->setStretchFactor(1, 1);
    layout->addWidget(plots, 1);
    worst_ = new QLabel;
    worst_->setObjectName("numericsWorst");
    worst_->setTextFormat(Qt::PlainText);
    worst_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));  // a text table
    // Its lines are table rows, as wide as the longest tensor name: they scroll across
    // rather than wrap (which garbles the columns) or widen the whole view.
    worst_->setWordWrap(false);
    worst_area_ = new QScrollArea;
    worst_area_->setObjectName("numericsWorstArea");
    worst_area_->setWidget(worst_);
    worst_area_->setWidgetResizable(true);
    worst_area_->setFrameShape(QFrame::NoFrame);
    worst_area_->setVerticalScrollBarPolicy(Qt::ScrollBarAsNeeded);
    worst_area_->setHorizontalScrollBarPolicy(Qt::ScrollBarAsNeeded);
    layout->addWidget(worst_area_);
    connect(metric_box_, &QComboBox::currentIndexChanged, this,
            [this](int i) { setMetric(static_cast<NumericsMetric>(i)); });
    connect(plot_, &QCustomPlot::mouseMove, this, [this](QMouseEvent* e) {
        QString text = textAt(e->pos());
        if (text.isEmpty()) {
            text = labelAt(e->pos());
        }
        if (text.isEmpty()) {
            QToolTip::hideText();
        } else {
            QToolTip::showText(plot_->mapToGlobal(e->pos()), text, plot_);
        }
    });
    connect(scale_plot_, &QCustomPlot::mouseMove, this, [this](QMouseEvent* e) {
        const QString text = scaleTextAt(e->pos());
        if (text.isEmpty()) {
            QToolTip::hideText();
        } else {
            QToolTip::showText(scale_plot_->mapToGlobal(e->pos()), text, scale_plot_);
        }
    });
    redraw();
}

void NumericsHeatmap::setRows(std::vector<run::NumericsRecord> rows) {
    rows_ = std::move(rows);
    grid_ = analysis::numericsGrid(rows_);
    scales_ = analysis::scaleHistory(rows_);
    draw::drawScaleHistory(*scale_plot_, scales_, draw::ScaleLegend::Right);
    nameMetrics();
    redraw();
}

QString NumericsHeatmap::metricText(NumericsMetric metric) const {
    return metric_box_->itemText(static_cast<int>(metric));
}

// The menu names the formats of the rows shown (fp16 before any): their limits are
// what the shares and the headroom are against.
void NumericsHeatmap::nameMetrics() {
    const auto formats = analysis::formatsOf(analysis::summarizeNumerics(rows_));
    for (const auto metric : {NumericsMetric::UnderflowSubnormal, NumericsMetric::UnderflowNormal,
                              NumericsMetric::Headroom, NumericsMetric::Saturated}) {
        metric_box_->setItemText(static_cast<int>(metric),
                                 QString::fromStdString(analysis::metricLabel(metric, formats)));
    }
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

QString NumericsHeatmap::labelAt(const QPoint& pos) const {
    if (grid_.names.empty() || pos.x() < 0 || pos.x() >= plot_->axisRect()->left()) {
        return {};
    }
    const long row = std::lround(plot_->yAxis->pixelToCoord(pos.y()));
    if (row < 0 || static_cast<size_t>(row) >= grid_.names.size()) {
        return {};
    }
    return QString::fromStdString(grid_.names[static_cast<size_t>(row)]);
}

QString NumericsHeatmap::rowLabel(int row) const {
    if (row < 0 || static_cast<size_t>(row) >= grid_.names.size() ||
        row % std::max(1, rows_labelled_every_) != 0) {
        return {};
    }
    return draw::numericsRowLabel(*plot_, grid_.names[static_cast<size_t>(row)], label_width_);
}

QString NumericsHeatmap::scaleTextAt(const QPoint& pos) const {
    if (scales_.empty() || !scale_plot_->axisRect()->rect().contains(pos)) {
        return {};
    }
    const double x = scale_plot_->xAxis->pixelToCoord(pos.x());
    // The step nearest the pointer: the steps recorded need not be evenly spaced.
    const auto& steps = scales_.steps;
    auto it = std::lower_bound(steps.begin(), steps.end(), x, [](int64_t step, double at) {
        return static_cast<double>(step) < at;
    });
    if (it == steps.end() || (it != steps.begin() &&
                              x - static_cast<double>(*(it - 1)) < static_cast<double>(*it) - x)) {
        --it;
    }
    return QString::fromStdString(
        analysis::scaleStepText(scales_, static_cast<size_t>(it - steps.begin())));
}

QString NumericsHeatmap::worstText() const {
    return worst_->text();
}

void NumericsHeatmap::redraw() {
    const bool any = !grid_.names.empty();
    empty_->setVisible(!any);
    plot_->setVisible(any);
    worst_area_->setVisible(any);
    scale_plot_->setVisible(!scales_.empty());
    labelRows();
    if (any) {
        worst_->setText(QString::fromStdString(
            analysis::worstLayersText(analysis::summarizeNumerics(rows_), 5)));
        fitWorst();
    }
    plot_->replot();
    if (!scales_.empty()) {
        scale_plot_->replot();
    }
}

// Draws the map with as many tensor names as fit the plot's height (every k-th
// row when they do not all fit; hovering a cell or a name names any row), each name
// at most a third of the plot's width, elided in the middle, so the cells keep the
// rest.
void NumericsHeatmap::labelRows() {
    const QFontMetrics metrics(plot_->yAxis->tickLabelFont());
    // A line and a little space between names; the cells' height is the plot's less the
    // step axis, its label and the margins (four lines).
    const int line = metrics.height() + 2;
    rows_labelled_every_ =
        draw::numericsLabelStride(grid_.names.size(), plot_->height() - 4 * line, line);
    label_width_ = std::max(8 * metrics.averageCharWidth(), plot_->width() / 3);
    draw::drawNumericsMap(*plot_, *map_, *scale_, grid_, metric_, rows_labelled_every_,
                          label_width_);
}

// Every line and the scroll bar under them, but at most 40% of the view (an FP8 model
// casts many tensors): the heatmap keeps the rest; the lines past it scroll.
void NumericsHeatmap::fitWorst() {
    const int all =
        worst_->sizeHint().height() + worst_area_->horizontalScrollBar()->sizeHint().height();
    worst_area_->setFixedHeight(std::min(all, std::max(120, height() * 2 / 5)));
}

bool NumericsHeatmap::eventFilter(QObject* watched, QEvent* event) {
    // The plot changes height without the view doing so (the tables below it grow).
    if (watched == plot_ && event->type() == QEvent::Resize && !grid_.names.empty()) {
        labelRows();
        plot_->replot(QCustomPlot::rpQueuedReplot);
    }
    return QWidget::eventFilter(watched, event);
}

void NumericsHeatmap::resizeEvent(QResizeEvent* event) {
    QWidget::resizeEvent(event);
    if (!grid_.names.empty()) {
        fitWorst();  // the plot's own resize then labels its rows again
    }
}

}  // namespace ampbench::ui
