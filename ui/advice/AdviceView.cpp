#include "ui/advice/AdviceView.h"

#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>
#include <cmath>

#include "core/analysis/ExperimentAnalysis.h"
#include "core/analysis/Format.h"
#include "core/train/BatchFinder.h"
#include "ui/EmptyViewNote.h"
#include "ui/data/StoreSession.h"
#include "ui/data/StoreTask.h"
#include "ui/draw/AdviceChart.h"
#include "ui/plots/PlotPanel.h"

namespace ampbench::ui {
namespace {

QString qs(const std::string& s) {
    return QString::fromStdString(s);
}

/// What a store task brings back: the advice and its experiment's spec.
struct Loaded {
    analysis::Advice advice;
    config::ExperimentSpec spec;
};

/// The newest experiment of `db` that is an advice; 0 for none.
qint64 newestAdvice(const store::Database& db) {
    auto experiments = db.experiments();
    for (auto it = experiments.rbegin(); it != experiments.rend(); ++it) {
        for (const auto& run : db.runs(it->id)) {
            if (analysis::timingPass(run)) {
                return it->id;
            }
        }
    }
    return 0;
}

}  // namespace

AdviceView::AdviceView(StoreSession& session, QWidget* parent)
    : QWidget(parent), session_(session) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);

    auto* what = new QHBoxLayout;
    source_ = new QLabel;
    source_->setObjectName("adviceSource");
    source_->setWordWrap(true);
    source_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto* model = new QPushButton(tr("Model file\u2026"));
    model->setToolTip(tr("A TorchScript model (.pt) for the experiment in the editor"));
    auto* data = new QPushButton(tr("Data\u2026"));
    data->setToolTip(tr("Your data (.npz, .npy, .csv) for the experiment in the editor"));
    auto* edit = new QPushButton(tr("Edit\u2026"));
    edit->setToolTip(tr("Model, data, batch and optimizer in the experiment editor"));
    what->addWidget(source_, 1);
    what->addWidget(model);
    what->addWidget(data);
    what->addWidget(edit);
    layout->addLayout(what);
    connect(model, &QPushButton::clicked, this, [this] {
        const QString path = QFileDialog::getOpenFileName(
            this, tr("Model file"), {}, tr("TorchScript models (*.pt *.pth);;All files (*)"));
        if (!path.isEmpty()) {
            Q_EMIT modelFileChosen(path);
        }
    });
    connect(data, &QPushButton::clicked, this, [this] {
        const QString path = QFileDialog::getOpenFileName(
            this, tr("Data"), {}, tr("Arrays and tables (*.npz *.npy *.csv);;All files (*)"));
        if (!path.isEmpty()) {
            Q_EMIT dataChosen(path);
        }
    });
    connect(edit, &QPushButton::clicked, this, &AdviceView::editRequested);

    auto* bar = new QHBoxLayout;
    budget_ = new QSpinBox;
    budget_->setObjectName("adviceBudget");
    budget_->setRange(0, 24 * 60);
    budget_->setMaximumWidth(130);
    budget_->setSuffix(tr(" min"));
    budget_->setSpecialValueText(tr("as it needs"));
    budget_->setToolTip(
        tr("Wall time for the whole advice: the searches, a pass of each "
           "candidate and the quality check (as it needs: what this model "
           "takes for a quality check of 100 optimizer steps)"));
    memory_ = new QLineEdit;
    memory_->setObjectName("adviceMemory");
    memory_->setPlaceholderText(tr("device"));
    memory_->setMaximumWidth(90);
    memory_->setToolTip(
        tr("The max-batch searches' memory budget, e.g. 8G; empty: the GPU's "
           "memory on CUDA, half the RAM on CPU"));
    advise_ = new QPushButton(tr("Advise"));
    advise_->setObjectName("adviseButton");
    cancel_ = new QPushButton(tr("Cancel"));
    cancel_->setEnabled(false);
    bar->addWidget(new QLabel(tr("Budget")));
    bar->addWidget(budget_);
    bar->addWidget(new QLabel(tr("Memory")));
    bar->addWidget(memory_);
    bar->addWidget(advise_);
    bar->addWidget(cancel_);
    progress_ = new QProgressBar;
    progress_->setObjectName("adviceProgress");
    progress_->setVisible(false);
    bar->addWidget(progress_, 1);
    bar->addStretch(0);
    layout->addLayout(bar);
    status_ = new QLabel;
    status_->setObjectName("adviceStatus");
    status_->setWordWrap(true);
    layout->addWidget(status_);
    connect(advise_, &QPushButton::clicked, this, &AdviceView::requestAdvice);
    connect(cancel_, &QPushButton::clicked, this, &AdviceView::cancelRequested);

    auto* rec = new QHBoxLayout;
    recommendation_ = new QLabel;
    recommendation_->setObjectName("adviceRecommendation");
    recommendation_->setWordWrap(true);
    recommendation_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    open_ = new QPushButton(tr("Open as comparison"));
    open_->setObjectName("adviceOpen");
    open_->setToolTip(
        tr("The recommended setting against the baseline, three seeds, in the "
           "experiment editor"));
    open_->setEnabled(false);
    rec->addWidget(recommendation_, 1);
    rec->addWidget(open_, 0, Qt::AlignTop);
    layout->addLayout(rec);
    connect(open_, &QPushButton::clicked, this, [this] {
        if (advice_.recommendation()) {
            Q_EMIT openRequested(analysis::recommendedSpec(advice_, advice_spec_));
        }
    });

    auto* split = new QSplitter(Qt::Horizontal);
    split->setObjectName("adviceSplit");
    split->setChildrenCollapsible(false);
    table_ = new QTableWidget;
    table_->setObjectName("adviceTable");
    table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table_->verticalHeader()->setVisible(false);
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    EmptyViewNote::install(table_, tr("No advice yet: choose the model and data, a budget, "
                                      "then Advise (or `ampbench-cli advise`)"));
    chart_ = new PlotPanel(tr("Throughput against memory"));
    chart_->setObjectName("adviceChart");
    chart_->setMinimumSize(280, 220);
    split->addWidget(table_);
    split->addWidget(chart_);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    layout->addWidget(split, 1);
    reasons_ = new QLabel;
    reasons_->setObjectName("adviceReasons");
    reasons_->setWordWrap(true);
    reasons_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(reasons_);
}

void AdviceView::setSource(const config::ExperimentSpec& spec) {
    source_spec_ = spec;
    source_->setText(tr("<b>Advise for:</b> %1, batch %2, %3 lr %4")
                         .arg(qs(config::describeWorkload(spec)).toHtmlEscaped())
                         .arg(spec.micro_batch)
                         .arg(qs(config::toString(spec.optimizer.kind)))
                         .arg(spec.optimizer.lr));
}

std::optional<train::AdviseOptions> AdviceView::options(QString* problem) const {
    train::AdviseOptions o;
    o.budget_s = budget_->value() * 60.0;
    const QString memory = memory_->text().trimmed();
    if (!memory.isEmpty()) {
        const auto bytes = analysis::parseByteSize(memory.toStdString());
        if (!bytes || *bytes <= 0) {
            if (problem) {
                *problem = tr("Memory: %1 is not a size such as 8G or 512M").arg(memory);
            }
            return std::nullopt;
        }
        o.memory_bytes = *bytes;
    }
    return o;
}

void AdviceView::requestAdvice() {
    QString problem;
    if (const auto o = options(&problem)) {
        Q_EMIT adviseRequested(*o);
    } else {
        status_->setText(problem);
    }
}

void AdviceView::setBusy(bool busy) {
    advise_->setEnabled(!busy);
    cancel_->setEnabled(busy);
    progress_->setVisible(busy);
    if (busy) {
        progress_->setRange(0, 0);
    }
}

QString AdviceView::showProgress(const QString& phase, const QString& candidate, int done,
                                 int total, double secondsLeft) {
    if (total > 0) {
        progress_->setRange(0, total);
        progress_->setValue(done);
    }
    const QString left = std::isfinite(secondsLeft)
                             ? QStringLiteral(", ") + qs(train::formatSecondsLeft(secondsLeft))
                             : QString();
    const QString line =
        tr("%1: %2 (%3 of %4)%5").arg(phase, candidate).arg(done + 1).arg(total).arg(left);
    status_->setText(line);
    return line;
}

void AdviceView::showEnd(qint64 experimentId, const QString& message) {
    setBusy(false);
    status_->setText(message);
    if (experimentId > 0) {
        showAdvice(experimentId);
    }
}

void AdviceView::showAdvice(qint64 experimentId) {
    if (session_.path().isEmpty()) {
        return;
    }
    loading_ = experimentId;
    runStoreTask<std::optional<Loaded>>(
        this, session_.path(),
        [experimentId](const store::Database& db) -> std::optional<Loaded> {
            const qint64 id = experimentId > 0 ? experimentId : newestAdvice(db);
            const auto data = id > 0 ? analysis::loadExperiment(db, id) : std::nullopt;
            if (!data || !analysis::isAdvice(*data)) {
                return std::nullopt;
            }
            return Loaded{analysis::readAdvice(*data, analysis::analyzeExperiment(*data)),
                          data->spec};
        },
        [this, experimentId](StoreTaskResult<std::optional<Loaded>>& r) {
            if (loading_ != experimentId) {
                return;  // a newer request is on its way
            }
            loading_ = -1;
            if (!r.error.isEmpty()) {
                status_->setText(r.error);
                return;
            }
            if (!r.value || !*r.value) {
                return;
            }
            advice_ = std::move((*r.value)->advice);
            advice_spec_ = std::move((*r.value)->spec);
            fill();
            Q_EMIT shown(advice_.experiment_id);
        });
}

void AdviceView::fill() {
    const auto header = analysis::adviceHeader(advice_);
    const auto rows = analysis::adviceCells(advice_);
    table_->clear();
    table_->setColumnCount(static_cast<int>(header.size()));
    table_->setRowCount(static_cast<int>(rows.size()));
    QStringList labels;
    for (const auto& h : header) {
        labels << qs(h);
    }
    table_->setHorizontalHeaderLabels(labels);
    for (size_t r = 0; r < rows.size(); ++r) {
        const std::string why = analysis::reasonText(advice_.rows[r], advice_.baseline);
        for (size_t c = 0; c < rows[r].size(); ++c) {
            auto* item = new QTableWidgetItem(qs(rows[r][c]));
            const bool numeric = std::find(analysis::kAdviceNumericColumns.begin(),
                                           analysis::kAdviceNumericColumns.end(),
                                           c) != analysis::kAdviceNumericColumns.end();
            item->setTextAlignment((numeric ? Qt::AlignRight : Qt::AlignLeft) | Qt::AlignVCenter);
            if (!why.empty()) {
                item->setToolTip(qs(why));
                item->setForeground(palette().color(QPalette::Disabled, QPalette::Text));
            }
            if (static_cast<int>(r) == advice_.recommended) {
                QFont bold = item->font();
                bold.setBold(true);
                item->setFont(bold);
            }
            table_->setItem(static_cast<int>(r), static_cast<int>(c), item);
        }
    }
    table_->resizeColumnsToContents();
    draw::drawAdviceChart(*chart_, advice_);
    chart_->replot();
    recommendation_->setText(tr("<b>Recommendation (advice %1):</b> %2")
                                 .arg(advice_.experiment_id)
                                 .arg(qs(analysis::recommendationText(advice_)).toHtmlEscaped()));
    open_->setEnabled(advice_.recommendation() != nullptr);
    QStringList reasons;
    for (const auto& r : advice_.rows) {
        if (const std::string why = analysis::reasonText(r, advice_.baseline); !why.empty()) {
            reasons << qs(r.f.arm + ", " + analysis::statusText(r) + ": " + why).toHtmlEscaped();
        }
    }
    for (const auto& line : advice_.not_for_model) {
        reasons << tr("not for this model, %1").arg(qs(line).toHtmlEscaped());
    }
    reasons_->setText(reasons.join(QStringLiteral("<br>")));
}

}  // namespace ampbench::ui
