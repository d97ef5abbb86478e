#include "ui/plots/PlotsView.h"

#include <QCheckBox>
#include <QComboBox>
#include <QEvent>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QMenu>
#include <QPushButton>
#include <QResizeEvent>
#include <QScrollArea>
#include <QSlider>
#include <QStyle>
#include <QToolButton>
#include <QVBoxLayout>

#include "core/analysis/PlotSeries.h"
#include "ui/Settings.h"
#include "ui/data/RunDataCache.h"
#include "ui/plots/MetricPlots.h"
#include "ui/plots/PlotInput.h"
#include "ui/plots/PlotLegend.h"
#include "ui/plots/PlotPanel.h"

namespace ampbench::ui {
namespace {

const PlotMetric kDefaultMetrics[PlotsView::kPanels] = {
    PlotMetric::TrainingLoss, PlotMetric::Validation, PlotMetric::Time,
    PlotMetric::Memory,       PlotMetric::LossScale,  PlotMetric::ArmBars};

/// Panels whose x-axis is the runs' progress (all but the per-arm bars).
bool followsX(PlotMetric m) {
    return m != PlotMetric::ArmBars;
}

}  // namespace

PlotsView::PlotsView(RunDataCache& cache, Settings& settings, QWidget* parent)
    : QWidget(parent), cache_(cache), settings_(settings) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);

    auto* controls = new QHBoxLayout;
    xAxis_ = new QComboBox;
    xAxis_->setObjectName("xAxis");
    for (auto axis :
         {analysis::XAxis::Step, analysis::XAxis::Samples, analysis::XAxis::WallSeconds}) {
        xAxis_->addItem(QString::fromStdString(analysis::toString(axis)), static_cast<int>(axis));
    }
    xAxis_->setToolTip(tr("Samples seen lines up arms with different accumulation"));
    xAxis_->setCurrentIndex(xAxis_->findData(static_cast<int>(settings_.plotXAxis())));
    smoothing_ = new QSlider(Qt::Horizontal);
    smoothing_->setObjectName("smoothing");
    smoothing_->setRange(0, 100);
    smoothing_->setValue(settings_.plotSmoothing());
    smoothing_->setMaximumWidth(180);
    smoothing_->setToolTip(tr("EMA smoothing of the loss; the raw curve stays faded behind"));
    smoothingValue_ = new QLabel;
    smoothingValue_->setMinimumWidth(32);
    logY_ = new QCheckBox(tr("Log loss axis"));
    logY_->setObjectName("logY");
    logY_->setChecked(settings_.plotLogY());
    auto* reset = new QPushButton(tr("Reset view"));
    reset->setToolTip(tr("Fit every plot to its data"));
    legendButton_ = new QToolButton;
    legendButton_->setObjectName("legendButton");
    legendButton_->setText(tr("Legend"));
    legendButton_->setCheckable(true);
    legendButton_->setChecked(settings_.plotLegendShown());
    legendButton_->setToolTip(tr("Show or hide the legend beside the plots"));
    auto* hint =
        new QLabel(tr("title: choose \u00b7 wheel: zoom \u00b7 drag: pan \u00b7 "
                      "double-click: maximise \u00b7 right-click: export"));
    hint->setEnabled(false);  // the palette's disabled text: readable, light or dark
    // Shown where there is room, cut where there is not: it must not widen the window
    // past a laptop's screen. Its words are the tooltip too.
    hint->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    hint->setToolTip(hint->text());
    controls->addWidget(new QLabel(tr("x-axis:")));
    controls->addWidget(xAxis_);
    controls->addSpacing(12);
    controls->addWidget(new QLabel(tr("Smoothing:")));
    controls->addWidget(smoothing_);
    controls->addWidget(smoothingValue_);
    controls->addSpacing(12);
    controls->addWidget(logY_);
    controls->addStretch(1);
    controls->addWidget(hint);
    controls->addWidget(reset);
    controls->addWidget(legendButton_);
    layout->addLayout(controls);
    // An empty database, or nothing ticked, would show six empty plots without a word.
    emptyHint_ = new QLabel(
        tr("No run is ticked: tick runs or an experiment in the tree on the left, or set up "
           "an experiment in the Experiment tab and press Run (Ctrl+R)."));
    emptyHint_->setObjectName("plotsEmptyHint");
    emptyHint_->setWordWrap(true);
    emptyHint_->setAlignment(Qt::AlignCenter);
    emptyHint_->setContentsMargins(8, 8, 8, 8);
    layout->addWidget(emptyHint_);

    const QStringList saved = settings_.plotPanelMetrics();
    for (int i = 0; i < kPanels; ++i) {
        const PlotMetric m = metricFromKey(saved.value(i), kDefaultMetrics[i]);
        auto* p = new PlotPanel(metricTitle(m));
        p->setTitleMenu(true);
        p->legend->setVisible(false);  // the legend beside the panels names every curve
        panels_.append(p);
        metrics_.append(m);
        drawn_.append(m);
        hasData_.append(true);
        connect(p, &PlotPanel::titleClicked, this,
                [this, i](const QPoint& at) { chooseMetric(i, at); });
        connect(p, &PlotPanel::contextMenuAboutToShow, this,
                [this, i](QMenu* menu) { addMetricMenu(i, menu); });
        connect(p, &PlotPanel::maximiseToggled, this,
                [this, i] { setMaximised(maximised_ == i ? -1 : i); });
        connect(p, &PlotPanel::hiddenToggled, this,
                [this](const QString& label, bool hidden) { setRunHidden(label, hidden); });
        // Panels over the runs' progress zoom and pan together.
        connect(p, &PlotPanel::xRangeChangedByUser, this, [this, i](const QCPRange& range) {
            if (!followsX(drawn_[i])) {
                return;
            }
            for (int j = 0; j < kPanels; ++j) {
                if (j != i && followsX(drawn_[j])) {
                    panels_[j]->followXRange(range);
                }
            }
        });
        connect(p, &PlotPanel::viewResetByUser, this, &PlotsView::resetViews);
        // The per-arm bars fit their labels to the width they get.
        connect(p, &PlotPanel::resized, this, [this, i] {
            if (drawn_[i] == PlotMetric::ArmBars) {
                scheduleRedraw();
            }
        });
    }

    auto* body = new QHBoxLayout;
    body->setSpacing(4);
    // Rows of panels that do not fit the height (a laptop's screen) scroll rather than
    // squeeze each panel below what it reads at, or push the window off the screen.
    auto* gridBox = new QWidget;
    gridBox->setObjectName("plotGrid");
    grid_ = new QGridLayout(gridBox);
    grid_->setContentsMargins(0, 0, 0, 0);
    grid_->setSpacing(4);
    scroll_ = new QScrollArea;
    scroll_->setObjectName("plotScroll");
    scroll_->setWidget(gridBox);
    scroll_->setWidgetResizable(true);
    scroll_->setFrameShape(QFrame::NoFrame);
    scroll_->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    scroll_->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
    // Two panels across and one row always show whole; a scroll area alone would let
    // the splitter squeeze them out of sight.
    scroll_->setMinimumSize(2 * PlotPanel::kMinimumWidth + grid_->spacing() +
                                style()->pixelMetric(QStyle::PM_ScrollBarExtent),
                            PlotPanel::kMinimumHeight);
    body->addWidget(scroll_, 1);
    legend_ = new PlotLegend;
    legend_->setMaximumWidth(240);
    legend_->setMinimumWidth(170);
    legend_->setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Expanding);
    legend_->setVisible(legendButton_->isChecked());
    body->addWidget(legend_);
    layout->addLayout(body, 1);
    layoutPanels();

    connect(legend_, &PlotLegend::hiddenToggled, this, &PlotsView::setRunHidden);
    connect(legendButton_, &QToolButton::toggled, this, [this](bool on) {
        legend_->setVisible(on);
        settings_.setPlotLegendShown(on);
    });
    redraw_.setSingleShot(true);
    redraw_.setInterval(kRedrawIntervalMs);
    connect(&redraw_, &QTimer::timeout, this, &PlotsView::redrawNow);
    connect(&cache_, &RunDataCache::updated, this, &PlotsView::scheduleRedraw);
    connect(&cache_, &RunDataCache::reset, this, [this] { curves_.clear(); });
    connect(xAxis_, &QComboBox::currentIndexChanged, this, [this] {
        settings_.setPlotXAxis(static_cast<analysis::XAxis>(xAxis_->currentData().toInt()));
        resetViews();  // the old x range means nothing on the new axis
    });
    connect(smoothing_, &QSlider::valueChanged, this, [this](int v) {
        settings_.setPlotSmoothing(v);
        smoothingValue_->setText(QString::number(analysis::smoothingWeight(v), 'f', 2));
        scheduleRedraw();
    });
    connect(logY_, &QCheckBox::toggled, this, [this](bool on) {
        settings_.setPlotLogY(on);
        for (int i = 0; i < kPanels; ++i) {
            if (drawn_[i] == PlotMetric::TrainingLoss) {
                panels_[i]->forgetUserView();
            }
        }
        scheduleRedraw();
    });
    connect(reset, &QPushButton::clicked, this, &PlotsView::resetViews);
    smoothingValue_->setText(
        QString::number(analysis::smoothingWeight(smoothing_->value()), 'f', 2));
}

void PlotsView::changeEvent(QEvent* event) {
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange) {
        scheduleRedraw();
    }
}

void PlotsView::scheduleRedraw() {
    if (!redraw_.isActive()) {
        redraw_.start();
    }
}

void PlotsView::resetViews() {
    for (PlotPanel* p : std::as_const(panels_)) {
        p->forgetUserView();
    }
    redrawNow();
}

void PlotsView::setPanelMetric(int index, PlotMetric metric) {
    if (index < 0 || index >= kPanels) {
        return;
    }
    metrics_[index] = metric;
    panels_[index]->forgetUserView();
    saveMetrics();
    redrawNow();
}

bool PlotsView::isPanelShown(int index) const {
    return maximised_ >= 0 ? index == maximised_ : hasData_.value(index, false);
}

void PlotsView::setMaximised(int index) {
    maximised_ = index >= 0 && index < kPanels ? index : -1;
    layoutPanels();
}

void PlotsView::setRunHidden(const QString& label, bool hidden) {
    if (hidden) {
        hidden_.insert(label);
    } else {
        hidden_.remove(label);
    }
    for (PlotPanel* p : std::as_const(panels_)) {
        if (p->isHidden(label) != hidden) {
            p->setHidden(label, hidden);
            p->replot();
        }
    }
    legend_->setRunHidden(label, hidden);
}

void PlotsView::chooseMetric(int index, const QPoint& globalPos) {
    QMenu menu(this);
    addMetricMenu(index, &menu);
    menu.exec(globalPos);
}

void PlotsView::addMetricMenu(int index, QMenu* menu) {
    QMenu* show = menu->addMenu(tr("Show"));
    for (PlotMetric m : allPlotMetrics()) {
        QAction* a =
            show->addAction(metricName(m), this, [this, index, m] { setPanelMetric(index, m); });
        a->setCheckable(true);
        a->setChecked(metrics_[index] == m);
    }
}

void PlotsView::resizeEvent(QResizeEvent* event) {
    QWidget::resizeEvent(event);
    const int legend = legend_->isVisible() ? legend_->width() : 0;
    const int want = width() - legend >= kColumns * kReadableWidth ? kColumns : 2;
    if (want != columns_) {
        columns_ = want;
        layoutPanels();
    }
}

void PlotsView::layoutPanels() {
    for (PlotPanel* p : std::as_const(panels_)) {
        grid_->removeWidget(p);
    }
    for (int r = 0; r < grid_->rowCount(); ++r) {
        grid_->setRowStretch(r, 0);
    }
    for (int c = 0; c < grid_->columnCount(); ++c) {
        grid_->setColumnStretch(c, 0);
    }
    QList<PlotPanel*> shown;
    for (int i = 0; i < kPanels; ++i) {
        const bool on = isPanelShown(i);
        panels_[i]->setVisible(on);
        if (on) {
            shown.append(panels_[i]);
        }
    }
    // Fill rows of columns_; fewer panels take the width they leave.
    const int n = static_cast<int>(shown.size());
    const int columns = std::max(1, std::min<int>(columns_, n));
    for (int k = 0; k < n; ++k) {
        // The last panel takes what its row leaves, so no cell stays empty.
        const int span = k == n - 1 ? columns - k % columns : 1;
        grid_->addWidget(shown[k], k / columns, k % columns, 1, span);
    }
    for (int c = 0; c < columns; ++c) {
        grid_->setColumnStretch(c, 1);
    }
    const int rows = (n + columns - 1) / columns;
    for (int r = 0; r < rows; ++r) {
        grid_->setRowStretch(r, r == 0 && rows > 1 ? 3 : 2);  // the loss row a little taller
    }
}

void PlotsView::saveMetrics() const {
    QStringList keys;
    for (PlotMetric m : metrics_) {
        keys.append(metricKey(m));
    }
    settings_.setPlotPanelMetrics(keys);
}

void PlotsView::redrawNow() {
    redraw_.stop();
    QElapsedTimer timer;
    timer.start();
    PlotInput in = buildPlotInput(cache_, palette().color(QPalette::Base).lightnessF() < 0.5);
    in.xAxis = static_cast<analysis::XAxis>(xAxis_->currentData().toInt());
    in.smoothing = analysis::smoothingWeight(smoothing_->value());
    in.logY = logY_->isChecked();
    in.curves = &curves_;
    bool layoutChanged = false;
    for (int i = 0; i < kPanels; ++i) {
        const PlotMetric m = resolveMetric(metrics_[i], in);
        if (m != drawn_[i]) {
            panels_[i]->forgetUserView();
            drawn_[i] = m;
        }
        panels_[i]->setTitle(metricTitle(m));
        panels_[i]->setTitleNote(m != metrics_[i] ? tr("(auto)") : QString());
        panels_[i]->setObjectName(metricTitle(m));
        // With nothing ticked every panel stays, empty; otherwise one without data goes.
        const bool has = drawMetric(*panels_[i], m, in) || in.runs.empty();
        layoutChanged = layoutChanged || has != hasData_[i];
        hasData_[i] = has;
    }
    if (layoutChanged) {
        layoutPanels();
    }
    emptyHint_->setVisible(in.runs.empty());
    // Line the x-axes up with the first panel over the runs' progress (evaluations
    // cover less of it) unless the user zoomed.
    PlotPanel* lead = nullptr;
    for (int i = 0; i < kPanels && !lead; ++i) {
        if (followsX(drawn_[i]) && !panels_[i]->userView() && !panels_[i]->curves().isEmpty()) {
            lead = panels_[i];
        }
    }
    for (int i = 0; i < kPanels && lead; ++i) {
        if (panels_[i] != lead && followsX(drawn_[i]) && !panels_[i]->userView()) {
            panels_[i]->xAxis->setRange(lead->xAxis->range());
        }
    }
    for (PlotPanel* p : std::as_const(panels_)) {
        p->limitAntialiasing();
        p->replot();
    }
    legend_->setInput(in, hidden_);
    curves_.endRedraw();
    curves_.retain(cache_.runs());
    lastRedrawMs_ = static_cast<double>(timer.nsecsElapsed()) / 1e6;
    Q_EMIT redrawn();
}

}  // namespace ampbench::ui
