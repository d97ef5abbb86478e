#include "ui/runs/CompareView.h"

#include <stdexcept>

#include <QClipboard>
#include <QComboBox>
#include <QGuiApplication>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QResizeEvent>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTableView>
#include <QTreeView>
#include <QVBoxLayout>
#include <algorithm>
#include <functional>
#include <optional>
#include <set>

#include "core/analysis/ComparisonTable.h"
#include "core/analysis/ExperimentAnalysis.h"
#include "core/analysis/ExperimentData.h"
#include "ui/Settings.h"
#include "ui/data/RunDataCache.h"
#include "ui/data/StoreSession.h"
#include "ui/data/StoreTask.h"
#include "ui/plots/PlotInput.h"
#include "ui/plots/PlotsView.h"
#include "ui/report/JudgementPlots.h"
#include "ui/runs/RunListColumns.h"
#include "ui/runs/RunTreeModel.h"
#include "ui/runs/SummaryTableModel.h"
#include "ui/runs/VerdictPanel.h"

namespace ampbench::ui {

CompareView::CompareView(RunTreeModel& runs, RunDataCache& cache, StoreSession& session,
                         Settings& settings, QWidget* parent)
    : QWidget(parent), runs_(runs), cache_(cache), session_(session) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);

    pickerOrder_ = new QSortFilterProxyModel(this);
    pickerOrder_->setSourceModel(&runs_);
    pickerOrder_->setSortRole(RunTreeModel::SortRole);
    picker_ = new QTreeView;
    picker_->setObjectName("runPicker");
    picker_->setModel(pickerOrder_);
    picker_->setSortingEnabled(true);
    // An experiment's name and a run's label are cut at their end; a run's arm and seed
    // keep their room (RunListColumns), and the tooltip has the name whole.
    picker_->setTextElideMode(Qt::ElideRight);
    picker_->sortByColumn(RunTreeModel::DateColumn, Qt::DescendingOrder);
    picker_->setColumnHidden(RunTreeModel::DateColumn, true);
    picker_->setColumnHidden(RunTreeModel::NotesColumn, true);
    picker_->setColumnHidden(RunTreeModel::IdColumn, true);  // in each row's tooltip
    new RunListColumns(picker_);
    picker_->setUniformRowHeights(true);
    picker_->setToolTip(tr("Tick runs from any experiments to plot and compare them"));

    plots_ = new PlotsView(cache_, settings);

    auto* summaryBox = new QWidget;
    auto* summaryLayout = new QVBoxLayout(summaryBox);
    summaryLayout->setContentsMargins(0, 0, 0, 0);
    auto* bar = new QHBoxLayout;
    baseline_ = new QComboBox;
    baseline_->setObjectName("baseline");
    baseline_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    baseline_->setToolTip(tr("Speed-up and memory ratio are against this arm"));
    auto* copy = new QPushButton(tr("Copy table"));
    copy->setToolTip(tr("Copy the summary as tab-separated text (pastes into a spreadsheet)"));
    bar->addWidget(new QLabel(tr("<b>Summary</b> \u00b7 baseline:")));
    bar->addWidget(baseline_);
    bar->addStretch(1);
    bar->addWidget(copy);
    summaryLayout->addLayout(bar);
    summary_ = new SummaryTableModel(this);
    sorted_ = new QSortFilterProxyModel(this);
    sorted_->setSourceModel(summary_);
    sorted_->setSortRole(SummaryTableModel::SortRole);
    table_ = new QTableView;
    table_->setObjectName("summary");
    table_->setModel(sorted_);
    table_->setSortingEnabled(true);
    table_->sortByColumn(-1, Qt::AscendingOrder);  // arm order until the user sorts
    table_->verticalHeader()->setVisible(false);
    table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    table_->horizontalHeader()->setStretchLastSection(true);
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->setAlternatingRowColors(true);
    summaryLayout->addWidget(table_);

    // Unnamed, so not kept across starts: it fits the summary to the arms shown.
    split_ = new QSplitter(Qt::Vertical);
    auto* right = split_;
    right->addWidget(plots_);
    right->addWidget(summaryBox);
    right->setStretchFactor(0, 4);
    right->setStretchFactor(1, 1);
    right->setSizes({760, 150});
    // Left: the picker above the verdict of the ticked runs' experiment.
    auto* verdictBox = new QWidget;
    auto* verdictLayout = new QVBoxLayout(verdictBox);
    verdictLayout->setContentsMargins(0, 0, 0, 0);
    verdictLayout->addWidget(
        new QLabel(tr("<b>Verdict</b> \u00b7 against the summary's baseline")));
    verdict_ = new VerdictPanel;
    verdict_->setObjectName("verdict");
    verdictLayout->addWidget(verdict_);
    auto* left = new QSplitter(Qt::Vertical);
    left->setObjectName("runsLeftSplit");  // named: kept across starts (Settings)
    left->setMinimumWidth(kListMinimumWidth);
    left->addWidget(picker_);
    left->addWidget(verdictBox);
    left->setStretchFactor(0, 1);
    left->setStretchFactor(1, 2);
    left->setSizes({300, 600});
    sides_ = new QSplitter(Qt::Horizontal);
    sides_->setObjectName("runsSidesSplit");
    sides_->addWidget(left);
    sides_->addWidget(right);
    sides_->setStretchFactor(0, 0);
    sides_->setStretchFactor(1, 1);
    sides_->setSizes({460, 1140});
    connect(sides_, &QSplitter::splitterMoved, this, [this] { sidesMoved_ = true; });
    layout->addWidget(sides_);

    verdictDelay_.setSingleShot(true);
    connect(&verdictDelay_, &QTimer::timeout, this, &CompareView::refreshVerdict);
    showVerdictMessage({});

    connect(&runs_, &RunTreeModel::checkedRunsChanged, this,
            [this] { cache_.setRuns(runs_.checkedRuns()); });
    connect(&cache_, &RunDataCache::updated, this, &CompareView::refreshSummary);
    connect(baseline_, &QComboBox::activated, this, &CompareView::refreshSummary);
    connect(&cache_, &RunDataCache::updated, this, [this] {
        if (verdictInputs() != verdictInputs_) {
            scheduleVerdict(kVerdictDelayMs);
        }
    });
    connect(&runs_, &RunTreeModel::checkedRunsChanged, this,
            [this] { scheduleVerdict(kVerdictDelayMs); });
    connect(baseline_, &QComboBox::activated, this, [this] { scheduleVerdict(kVerdictDelayMs); });
    connect(copy, &QPushButton::clicked, this, &CompareView::copySummary);
}

void CompareView::refreshSummary() {
    const PlotInput in = buildPlotInput(cache_);
    QStringList labels;
    QList<QColor> colors;
    for (const PlotGroup& g : in.groups) {
        labels << g.label;
        colors << g.color;
    }
    QString chosen = baseline_->currentText();
    if (!labels.contains(chosen)) {
        chosen = labels.value(0);
    }
    {
        const QSignalBlocker block(baseline_);
        baseline_->clear();
        baseline_->addItems(labels);
        baseline_->setCurrentText(chosen);
    }
    summary_->setArms(analysis::summarizeArms(groupedSummaries(in), chosen.toStdString()), colors);
    fitSummaryHeight();
}

void CompareView::showEvent(QShowEvent* event) {
    QWidget::showEvent(event);
    fitSummaryHeight();  // the splitter has its real height only now
    fitSides();
}

void CompareView::resizeEvent(QResizeEvent* event) {
    QWidget::resizeEvent(event);
    fitSides();
}

void CompareView::fitSides() {
    // The run list and verdict get a third of the width, the plots the rest: a fixed
    // 460 px left the plots of a 1024-pixel window too little. Again at each size the
    // window takes (opened at 1024 px and then maximised, the list stayed narrow)
    // until the user drags the divider; where the user's own sizes were restored,
    // those stay.
    if (sidesMoved_ || !isVisible() || sides_->width() <= 0 ||
        sides_->property(Settings::kRestoredSizes).toBool()) {
        return;
    }
    const int total = sides_->width() - sides_->handleWidth();
    const int left = std::clamp(total * 3 / 10, kListMinimumWidth, 460);
    sides_->setSizes({left, total - left});
}

void CompareView::fitSummaryHeight() {
    const int rows = summary_->rowCount();
    if (rows == summaryRows_ || !isVisible()) {
        return;  // only when the number of arms changes; the user may drag in between
    }
    summaryRows_ = rows;
    const int rowHeight = table_->verticalHeader()->defaultSectionSize();
    const int wanted = table_->horizontalHeader()->height() + std::clamp(rows, 2, 8) * rowHeight +
                       baseline_->sizeHint().height() + 16;
    const int total = split_->height();
    split_->setSizes({std::max(total / 2, total - wanted), std::min(wanted, total / 2)});
}

void CompareView::showVerdictMessage(const QString& message) {
    verdict_->clear(message.isEmpty()
                        ? tr("Tick the runs of one experiment to see whether its arms align "
                             "with the baseline.")
                        : message);
    verdictShown_ = 0;
}

void CompareView::scheduleVerdict(int ms) {
    if (!verdictDelay_.isActive() || verdictDelay_.remainingTime() > ms) {
        verdictDelay_.start(ms);
    }
}

QString CompareView::verdictInputs() const {
    QStringList parts;
    for (qint64 id : cache_.runs()) {
        if (const RunSeries* s = cache_.series(id)) {
            const int64_t last = s->steps.empty() ? 0 : s->steps.back().step;
            const int64_t planned = std::max<int64_t>(1, s->row.planned_steps);
            // Every new evaluation too: the Validation tab draws a running run's as
            // soon as it is recorded.
            parts << QStringLiteral("%1:%2:%3:%4")
                         .arg(id)
                         .arg(static_cast<int>(s->row.status))
                         .arg(last * kVerdictProgressSteps / planned)
                         .arg(s->evals.size());
        }
    }
    return parts.join(',');
}

void CompareView::refreshVerdict() {
    if (verdictBusy_) {
        verdictAgain_ = true;  // one analysis at a time; the newest data follows
        return;
    }
    verdictInputs_ = verdictInputs();
    std::set<qint64> experiments;
    for (qint64 id : cache_.runs()) {
        if (const RunSeries* s = cache_.series(id)) {
            experiments.insert(s->row.experiment_id);
        }
    }
    if (experiments.size() != 1 || !session_.isOpen()) {
        showVerdictMessage(
            experiments.size() > 1
                ? tr("The ticked runs come from %1 experiments. A verdict judges the arms of one "
                     "experiment against its baseline's seed noise: tick the runs of one.")
                      .arg(experiments.size())
                : QString());
        ++verdictUpdates_;
        Q_EMIT verdictUpdated();
        return;
    }
    const qint64 experiment = *experiments.begin();
    analysis::AnalysisOptions options;
    options.baseline = baseline_->currentText().toStdString();  // unknown: the spec's first
    verdictBusy_ = true;
    // The judgement of the finished runs, and what the running ones evaluated so far.
    struct Judged {
        analysis::ExperimentAnalysis analysis;
        std::vector<report::RunningEvaluations> running;
    };
    using Analysis = std::optional<Judged>;
    runStoreTask<Analysis>(
        this, session_.path(),
        [experiment, options](const store::Database& db) -> Analysis {
            auto data = analysis::loadExperiment(db, experiment);
            if (!data) {
                return std::nullopt;
            }
            // A damaged arm record would be judged as the default arm: say what is wrong.
            for (const auto& r : data->runs) {
                if (std::string problem = analysis::storedArmProblem(r.row); !problem.empty()) {
                    throw std::runtime_error(problem);
                }
            }
            return Judged{analysis::analyzeExperiment(*data, options),
                          report::runningEvaluations(*data)};
        },
        [this, experiment](StoreTaskResult<Analysis>& result) {
            verdictBusy_ = false;
            if (result.value && *result.value) {
                verdict_->setAnalysis((*result.value)->analysis, (*result.value)->running);
                verdictShown_ = experiment;
            } else if (!result.error.isEmpty()) {
                showVerdictMessage(
                    tr("Cannot judge experiment %1: %2").arg(experiment).arg(result.error));
            } else {
                showVerdictMessage(
                    tr("Experiment %1 is no longer in the database.").arg(experiment));
            }
            ++verdictUpdates_;
            Q_EMIT verdictUpdated();
            if (verdictAgain_) {
                verdictAgain_ = false;
                scheduleVerdict(kVerdictDelayMs);
            }
        });
}

QString CompareView::summaryTsv() const {
    return QString::fromStdString(
        analysis::comparisonTable(summary_->arms(), "peak memory").renderTsv());
}

void CompareView::copySummary() const {
    QGuiApplication::clipboard()->setText(summaryTsv());
}

void CompareView::revealExperiment(qint64 experimentId) {
    if (QStandardItem* item = runs_.experimentItem(experimentId)) {
        const QModelIndex index = pickerOrder_->mapFromSource(item->index());
        picker_->expand(index);
        picker_->scrollTo(index);
    }
}

}  // namespace ampbench::ui
