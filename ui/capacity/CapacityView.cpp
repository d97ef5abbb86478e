#include "ui/capacity/CapacityView.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

#include "core/analysis/Format.h"
#include "core/config/SpecJson.h"
#include "core/store/BatchSearchStore.h"
#include "ui/ElidingComboBox.h"
#include "ui/data/StoreSession.h"
#include "ui/draw/Palette.h"
#include "ui/plots/PlotPanel.h"

namespace ampbench::ui {
namespace {

QString qs(const std::string& s) {
    return QString::fromStdString(s);
}

enum Column {
    ArmCol,
    PrecisionCol,
    CkptCol,
    MaxCol,
    SafeCol,
    FailsCol,
    PeakCol,
    RatioCol,
    TrialsCol,
    StatusCol,
    NoteCol,
    ColumnCount
};

}  // namespace

CapacityView::CapacityView(StoreSession& session, QWidget* parent)
    : QWidget(parent), session_(session) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);

    auto* bar = new QHBoxLayout;
    experiments_ = new ElidingComboBox;
    experiments_->setObjectName("capacityExperiment");
    experiments_->setMinimumContentsLength(16);  // the bar fits a 1024-pixel window
    experiments_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    experiments_->setToolTip(tr("The experiment whose arms are searched (its stored spec)"));
    budget_ = new QLineEdit;
    budget_->setObjectName("capacityBudget");
    budget_->setPlaceholderText(tr("default"));
    budget_->setMaximumWidth(90);
    budget_->setToolTip(
        tr("Limit on the memory a trial adds, e.g. 40G or 512M; what the workbench holds "
           "already is not counted. Empty: the GPU's own memory on CUDA (out-of-memory is "
           "caught), half the RAM on CPU (where running out kills the process)."));
    margin_ = new QDoubleSpinBox;
    margin_->setObjectName("capacityMargin");
    margin_->setRange(0, 90);
    margin_->setDecimals(0);
    margin_->setValue(5);
    margin_->setSuffix(QStringLiteral(" %"));
    margin_->setToolTip(tr("Safe batch = max batch less this margin"));
    start_ = new QSpinBox;
    start_->setObjectName("capacityStart");
    start_->setRange(1, 1 << 20);
    start_->setValue(8);
    start_->setToolTip(tr("First micro-batch tried; the search doubles from here"));
    upper_ = new QSpinBox;
    upper_->setObjectName("capacityUpper");
    upper_->setRange(1, 1 << 24);
    upper_->setValue(65536);
    upper_->setToolTip(tr("Never try a larger micro-batch than this"));
    find_ = new QPushButton(tr("Find max batch"));
    find_->setObjectName("capacityFind");
    find_->setToolTip(
        tr("For every arm: double the micro-batch until a trial (a few full training steps) "
           "does not fit, then bisect. Runs on the training worker; results are stored."));
    cancel_ = new QPushButton(tr("Cancel"));
    cancel_->setEnabled(false);
    bar->addWidget(new QLabel(tr("Experiment:")));
    bar->addWidget(experiments_, 1);
    bar->addSpacing(12);
    bar->addWidget(new QLabel(tr("Budget:")));
    bar->addWidget(budget_);
    bar->addWidget(new QLabel(tr("Margin:")));
    bar->addWidget(margin_);
    bar->addWidget(new QLabel(tr("Start:")));
    bar->addWidget(start_);
    bar->addWidget(new QLabel(tr("At most:")));
    bar->addWidget(upper_);
    bar->addSpacing(12);
    bar->addWidget(find_);
    bar->addWidget(cancel_);
    layout->addLayout(bar);

    progress_ = new QLabel;
    progress_->setObjectName("capacityProgress");
    progress_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    progress_->setWordWrap(true);  // a long error must not widen the window past the screen
    layout->addWidget(progress_);

    plot_ = new PlotPanel(tr("Largest micro-batch that trains, per arm"));
    plot_->setObjectName("capacityChart");
    plot_->yAxis->setLabel(tr("max micro-batch"));
    // A micro-batch is a whole number: ticks at whole multiples, never at 0.2 or 0.5.
    QSharedPointer<QCPAxisTickerFixed> whole(new QCPAxisTickerFixed);
    whole->setTickStep(1);
    whole->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);
    plot_->yAxis->setTicker(whole);
    plot_->legend->setVisible(false);  // the ticks name the arms
    table_ = new QTableWidget(0, ColumnCount);
    table_->setObjectName("capacityTable");
    table_->setHorizontalHeaderLabels({tr("Arm"), tr("Precision"), tr("Checkpointing"),
                                       tr("Max batch"), tr("Safe batch"), tr("Fails at"),
                                       tr("Peak at max"), tr("vs baseline"), tr("Trials"),
                                       tr("Status"), tr("How it ended")});
    table_->verticalHeader()->setVisible(false);
    table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    table_->horizontalHeader()->setStretchLastSection(true);
    table_->setAlternatingRowColors(true);
    auto* split = new QSplitter(Qt::Vertical);
    split->setObjectName("capacitySplit");  // named: kept across starts (Settings)
    split->addWidget(plot_);
    split->addWidget(table_);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 1);
    layout->addWidget(split, 1);

    connect(experiments_, &QComboBox::activated, this, [this] { refresh(); });
    connect(find_, &QPushButton::clicked, this, &CapacityView::requestFind);
    connect(cancel_, &QPushButton::clicked, this, &CapacityView::cancelRequested);
    // The store changes with every commit of a training run: read it only when on show.
    auto refreshIfShown = [this] {
        if (isVisible()) {
            refresh();
        } else {
            stale_ = true;
        }
    };
    connect(&session_, &StoreSession::changed, this, refreshIfShown);
    connect(&session_, &StoreSession::closed, this, refreshIfShown);
}

void CapacityView::showEvent(QShowEvent* event) {
    QWidget::showEvent(event);
    if (stale_) {
        refresh();
    }
}

qint64 CapacityView::experiment() const {
    return experiments_->currentData().toLongLong();
}

void CapacityView::setExperiment(qint64 experimentId) {
    refresh();
    const int at = experimentId != 0 ? experiments_->findData(experimentId) : 0;
    if (at >= 0 && at != experiments_->currentIndex()) {
        experiments_->setCurrentIndex(at);
        refresh();
    }
}

void CapacityView::setBusy(bool busy) {
    busy_ = busy;
    find_->setEnabled(!busy && experiments_->count() > 0 && session_.isOpen() &&
                      !session_.isReadOnly());
    // A search records its trials: where nothing can be written, the button says why.
    find_->setToolTip(!session_.isOpen()           ? tr("No database is open")
                      : session_.isReadOnly()      ? tr("The database is open read-only: a search "
                                                             "records its trials in it")
                      : experiments_->count() == 0 ? tr("No experiment to search yet")
                                                   : QString());
    cancel_->setEnabled(busy);
}

void CapacityView::setProgressText(const QString& text) {
    progress_->setText(text);
}

QString CapacityView::progressText() const {
    return progress_->text();
}

QString CapacityView::showTrial(int armIndex, int arms, const QString& arm, qint64 batch,
                                const QString& outcome, qint64 peakBytes, double secondsLeft) {
    const QString line = tr("Max batch: %1 (arm %2 of %3) at micro-batch %4: %5, peak %6 \u00b7 %7")
                             .arg(arm)
                             .arg(armIndex + 1)
                             .arg(arms)
                             .arg(batch)
                             .arg(QString(outcome).replace('_', ' '))
                             .arg(qs(analysis::formatBytes(peakBytes)))
                             .arg(qs(train::formatSecondsLeft(secondsLeft)));
    armsHeard_.insert(arm);
    if (outcome == QLatin1String("fits")) {
        qint64& best = fitSoFar_[arm];
        best = std::max(best, batch);
    }
    progress_->setText(line);
    return line;
}

void CapacityView::beginSearch(qint64 experimentId) {
    fitSoFar_.clear();
    armsHeard_.clear();
    searching_ = experimentId;
    showChart();
}

bool CapacityView::waiting(const analysis::CapacityBar& bar) const {
    return busy_ && searching_ != 0 && searching_ == experiment() && bar.status != "running" &&
           !armsHeard_.contains(qs(bar.arm));
}

QString CapacityView::barLabel(int index) const {
    if (index < 0 || index >= static_cast<int>(chart_.bars.size())) {
        return {};
    }
    const analysis::CapacityBar& b = chart_.bars[static_cast<size_t>(index)];
    if (waiting(b)) {
        return tr("waiting");
    }
    const bool running = b.status == "running";
    // A search under way has its maximum only at the end: "none fit" then read as a
    // verdict while batches of 512 had already fit.
    if (running && b.max_batch == 0) {
        const qint64 fit = fitSoFar(qs(b.arm));
        return fit > 0 ? tr("%1 fit so far, searching").arg(fit) : tr("searching");
    }
    QString text = b.max_batch > 0 ? QString::number(b.max_batch) : tr("none fit");
    if (std::isfinite(b.ratio)) {
        text += QStringLiteral(" \u00b7 ") + qs(analysis::formatRatio(b.ratio));
    }
    if (b.status != "finished") {
        text +=
            QStringLiteral(" (") + (running ? tr("searching") : qs(b.status)) + QStringLiteral(")");
    }
    return text;
}

std::optional<train::CapacityOptions> CapacityView::options(QString* problem) const {
    train::CapacityOptions o;
    const QString budget = budget_->text().trimmed();
    if (!budget.isEmpty()) {
        const auto bytes = analysis::parseByteSize(budget.toStdString());
        if (!bytes || *bytes <= 0) {
            *problem = tr("Budget \"%1\": expected a size such as 40G, 512M or 1073741824, or "
                          "empty for the default")
                           .arg(budget);
            return std::nullopt;
        }
        o.budget_bytes = *bytes;
    }
    if (start_->value() > upper_->value()) {
        *problem = tr("Start (%1) is above At most (%2)").arg(start_->value()).arg(upper_->value());
        return std::nullopt;
    }
    o.finder.margin = margin_->value() / 100.0;
    o.finder.start = start_->value();
    o.finder.upper_bound = upper_->value();
    o.trial_steps = trialSteps_;
    return o;
}

void CapacityView::requestFind() {
    QString problem;
    const auto o = options(&problem);
    if (!o) {
        progress_->setText(problem);
        return;
    }
    if (experiment() != 0) {
        Q_EMIT findRequested(experiment(), *o);
    }
}

void CapacityView::refresh() {
    stale_ = false;
    store::Database* db = session_.db();
    const qint64 chosen = experiment();
    std::vector<store::BatchSearchRow> searches;
    device_.clear();
    {
        const QSignalBlocker block(experiments_);
        experiments_->clear();
        if (db) {
            try {
                auto rows = db->experiments();
                std::sort(rows.begin(), rows.end(),
                          [](const auto& a, const auto& b) { return a.id > b.id; });
                for (const auto& e : rows) {
                    experiments_->addItem(
                        tr("%1 \u00b7 %2 (%3 runs)").arg(e.id).arg(qs(e.name)).arg(e.run_count),
                        QVariant::fromValue<qint64>(e.id));
                }
                const int at = experiments_->findData(chosen);
                experiments_->setCurrentIndex(at >= 0 ? at : 0);
                if (const qint64 id = experiment(); id != 0) {
                    searches = store::BatchSearchStore(*db).searches(id);
                    if (auto row = db->experiment(id)) {
                        std::vector<config::FieldError> errors;
                        device_ = qs(config::toString(
                            config::specFromJsonText(row->spec_json, errors).device));
                    }
                }
            } catch (const std::exception& e) {
                progress_->setText(tr("Cannot read the searches: %1").arg(qs(e.what())));
            }
        }
    }
    chart_ = analysis::capacityChart(searches);
    setBusy(busy_);
    showChart();
}

void CapacityView::showChart() {
    plot_->clearCurves();
    for (QCPItemText* label : plot_->findChildren<QCPItemText*>("capacityLabel")) {
        plot_->removeItem(label);  // the plot holds a list of its items: never delete directly
    }
    QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
    double top = 0;
    const auto& bars = chart_.bars;
    table_->setRowCount(static_cast<int>(bars.size()));
    table_->horizontalHeaderItem(RatioCol)->setText(
        chart_.baseline.empty() ? tr("vs baseline") : tr("vs %1").arg(qs(chart_.baseline)));
    for (size_t i = 0; i < bars.size(); ++i) {
        const analysis::CapacityBar& b = bars[i];
        const double key = static_cast<double>(i);
        const QString arm = qs(b.arm);
        const QString kind = qs(b.precision) + (b.checkpointing ? tr(" + ckpt") : QString());
        ticker->addTick(key, arm + "\n" + kind);
        QCPBars* bar = plot_->addBars(arm, draw::armColor(static_cast<int>(i)));
        bar->setWidth(0.6);
        // A running search's bar grows with what fit so far.
        const qint64 height = waiting(b)                                 ? 0
                              : b.max_batch > 0 || b.status != "running" ? b.max_batch
                                                                         : fitSoFar(arm);
        bar->addData(key, static_cast<double>(height));
        top = std::max(top, static_cast<double>(height));
        auto* label = new QCPItemText(plot_);
        label->setObjectName("capacityLabel");
        label->setPositionAlignment(Qt::AlignHCenter | Qt::AlignBottom);
        label->position->setCoords(key, static_cast<double>(height));
        label->setText(barLabel(static_cast<int>(i)));
        label->setFont(QFont(font().family(), 9, QFont::Bold));

        auto cell = [&](int column, const QString& value, bool right = true) {
            auto* item = new QTableWidgetItem(value);
            item->setTextAlignment(right ? Qt::AlignRight | Qt::AlignVCenter
                                         : Qt::AlignLeft | Qt::AlignVCenter);
            table_->setItem(static_cast<int>(i), column, item);
        };
        auto count = [](int64_t n) {
            return n > 0 ? QString::number(n) : QStringLiteral("\u2013");
        };
        cell(ArmCol, arm, false);
        table_->item(static_cast<int>(i), ArmCol)->setIcon([&] {
            QPixmap swatch(12, 12);
            swatch.fill(draw::armColor(static_cast<int>(i)));
            return QIcon(swatch);
        }());
        cell(PrecisionCol, qs(b.precision), false);
        cell(CkptCol, b.checkpointing ? tr("yes") : tr("no"), false);
        cell(MaxCol, count(b.max_batch));
        cell(SafeCol, count(b.safe_batch));
        cell(FailsCol, count(b.first_failure));
        cell(PeakCol, qs(analysis::formatBytes(b.peak_at_max)));
        cell(RatioCol, qs(analysis::formatRatio(b.ratio)));
        cell(TrialsCol, QString::number(b.trials));
        cell(StatusCol,
             waiting(b) ? tr("waiting (last search %1)").arg(qs(b.status)) : qs(b.status), false);
        cell(NoteCol, qs(b.note), false);
    }
    plot_->xAxis->setTicker(ticker);
    plot_->xAxis->setSubTicks(false);
    plot_->xAxis->setRange(-0.6, std::max(0.6, static_cast<double>(bars.size()) - 0.4));
    plot_->yAxis->setRange(0, top > 0 ? top * 1.18 : 1);
    plot_->setMessage(
        !session_.isOpen()           ? tr("No database open")
        : experiments_->count() == 0 ? tr("No experiments yet: run one first")
        : bars.empty()
            ? tr("No max-batch search for this experiment yet: press Find max batch (on %1)")
                  .arg(device_.isEmpty() || device_ == QLatin1String("auto")
                           ? tr("its device: a GPU if there is one, else the CPU")
                           : device_)
            : QString());
    plot_->replot();
}

}  // namespace ampbench::ui
