#include "ui/plots/PlotsView.h"

#include <QCheckBox>
#include <QComboBox>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSlider>
#include <QVBoxLayout>

#include "core/analysis/PlotSeries.h"
#include "ui/Settings.h"
#include "ui/data/RunDataCache.h"
#include "ui/plots/CurvePlots.h"
#include "ui/plots/PlotInput.h"
#include "ui/plots/PlotPanel.h"
#include "ui/plots/TimingPlots.h"

namespace ampbench::ui {

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
    reset->setToolTip(tr("Fit every plot to its data (or double-click a plot)"));
    auto* hint = new QLabel(tr("wheel: zoom \u00b7 drag: pan \u00b7 legend: show/hide"));
    hint->setStyleSheet("color: gray;");
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
    layout->addLayout(controls);

    auto* grid = new QGridLayout;
    grid->setSpacing(4);
    loss_ = new PlotPanel(tr("Training loss"));
    validation_ = new PlotPanel(tr("Validation"));
    stepTime_ = new PlotPanel(tr("Step time"));
    bars_ = new PlotPanel(tr("Throughput and peak memory per arm"));
    memory_ = new PlotPanel(tr("Memory over time"));
    lossScale_ = new PlotPanel(tr("Loss scale (skipped steps \u00d7 on the loss)"));
    grid->addWidget(loss_, 0, 0);
    grid->addWidget(validation_, 0, 1);
    grid->addWidget(stepTime_, 0, 2);
    grid->addWidget(memory_, 1, 0);
    grid->addWidget(lossScale_, 1, 1);
    grid->addWidget(bars_, 1, 2);
    for (int i = 0; i < 3; ++i) {
        grid->setColumnStretch(i, 1);
    }
    // One legend (on the loss plot) for every panel: the colours are shared, hover
    // names any curve, and hiding a run there hides it everywhere.
    const QList<PlotPanel*> panels = {loss_, validation_, stepTime_, memory_, lossScale_, bars_};
    for (PlotPanel* p : panels) {
        p->legend->setVisible(p == loss_);
        connect(p, &PlotPanel::hiddenToggled, this,
                [this, panels, p](const QString& label, bool hidden) {
                    for (PlotPanel* other : panels) {
                        if (other != p) {
                            other->setHidden(label, hidden);
                            other->replot();
                        }
                    }
                });
    }
    // Panels over the same x-axis zoom and pan together; a reset resets them all.
    const QList<PlotPanel*> linked = {loss_, validation_, stepTime_, memory_, lossScale_};
    for (PlotPanel* p : linked) {
        connect(p, &PlotPanel::xRangeChangedByUser, this, [linked, p](const QCPRange& range) {
            for (PlotPanel* other : linked) {
                if (other != p) {
                    other->followXRange(range);
                }
            }
        });
        connect(p, &PlotPanel::viewResetByUser, this, &PlotsView::resetViews);
    }
    grid->setRowStretch(0, 3);
    grid->setRowStretch(1, 2);
    layout->addLayout(grid, 1);

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
        loss_->forgetUserView();
        scheduleRedraw();
    });
    connect(reset, &QPushButton::clicked, this, &PlotsView::resetViews);
    smoothingValue_->setText(
        QString::number(analysis::smoothingWeight(smoothing_->value()), 'f', 2));
}

void PlotsView::scheduleRedraw() {
    if (!redraw_.isActive()) {
        redraw_.start();
    }
}

void PlotsView::resetViews() {
    for (PlotPanel* p : {loss_, validation_, stepTime_, memory_, lossScale_, bars_}) {
        p->forgetUserView();
    }
    redrawNow();
}

void PlotsView::redrawNow() {
    redraw_.stop();
    QElapsedTimer timer;
    timer.start();
    PlotInput in = buildPlotInput(cache_);
    in.xAxis = static_cast<analysis::XAxis>(xAxis_->currentData().toInt());
    in.smoothing = analysis::smoothingWeight(smoothing_->value());
    in.logY = logY_->isChecked();
    in.curves = &curves_;
    drawLoss(*loss_, in);
    drawValidation(*validation_, in);
    drawStepTime(*stepTime_, in);
    drawMemory(*memory_, in);
    drawLossScale(*lossScale_, in);
    drawArmBars(*bars_, in);
    if (!loss_->userView() && !loss_->curves().isEmpty()) {
        // Line the x-axes up with the loss plot (evaluations cover less of it).
        for (PlotPanel* p : {validation_, stepTime_, memory_, lossScale_}) {
            if (!p->userView()) {
                p->xAxis->setRange(loss_->xAxis->range());
            }
        }
    }
    for (PlotPanel* p : {loss_, validation_, stepTime_, memory_, lossScale_, bars_}) {
        p->limitAntialiasing();
        p->replot();
    }
    curves_.retain(cache_.runs());
    lastRedrawMs_ = static_cast<double>(timer.nsecsElapsed()) / 1e6;
    Q_EMIT redrawn();
}

}  // namespace ampbench::ui
