// The main window's side of training: the worker's signals (runs planned, started,
// progressing and ended, notes, failures), the status and progress bars that follow
// them, and the line an experiment ends with (MainWindow.cpp holds the rest of the
// window, MainWindowQueue.cpp cancelling and the queue).
#include "ui/MainWindow.h"

#include <QProgressBar>
#include <QPushButton>
#include <QStandardItem>
#include <QStatusBar>
#include <QStringList>
#include <QTabWidget>

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/analysis/Format.h"
#include "ui/capacity/CapacityView.h"
#include "ui/data/StoreSession.h"
#include "ui/editor/ExperimentEditor.h"
#include "ui/runs/CompareView.h"
#include "ui/runs/RunTreeModel.h"
#include "ui/training/TrainingController.h"
#include "ui/training/TrainingWorker.h"

namespace ampbench::ui {

void MainWindow::connectTraining() {
    TrainingWorker* w = training_->worker();
    connect(training_, &TrainingController::runningChanged, this, [this](bool running) {
        if (!running) {
            currentRun_ = 0;
            running_.clear();
            queue_.clear();
        }
        progress_->setVisible(running);
        if (!running) {
            progress_->setRange(0, 1000);  // a max-batch search made it a busy bar
        }
        capacity_->setBusy(running);
        updateActions();
    });
    connect(capacity_, &CapacityView::findRequested, this, &MainWindow::findMaxBatch);
    connect(capacity_, &CapacityView::cancelRequested, this, &MainWindow::cancelRun);
    connect(w, &TrainingWorker::batchTrial, this,
            [this](int armIndex, const QString& arm, qint64 batch, const QString& outcome,
                   qint64 peakBytes, int arms, double secondsLeft) {
                statusBar()->showMessage(capacity_->showTrial(armIndex, arms, arm, batch, outcome,
                                                              peakBytes, secondsLeft));
            });
    connect(w, &TrainingWorker::batchSearchFinished, this,
            [this](qint64 experimentId, bool cancelled, const QString& error) {
                session_->pollNow();
                const QString line =
                    cancelled ? tr("Max-batch search of experiment %1 cancelled; the trials so "
                                   "far are kept.")
                                    .arg(experimentId)
                    : error.isEmpty()
                        ? tr("Max-batch search of experiment %1 finished.").arg(experimentId)
                        : tr("Max-batch search of experiment %1 ended with an error: %2")
                              .arg(experimentId)
                              .arg(error);
                capacity_->setProgressText(line);  // the tab's banner; each arm's note says why
                if (!error.isEmpty() && !cancelled) {
                    // Once where it is read: the tab on show has it in its banner and
                    // table; elsewhere a message says so, and the status bar points there.
                    statusBar()->showMessage(
                        tr("Max-batch search of experiment %1 ended with an error (Max batch "
                           "tab)")
                            .arg(experimentId),
                        10000);
                    if (tabs_->currentWidget() != capacity_) {
                        showError(tr("Max-batch search"), error);
                    }
                } else {
                    statusBar()->showMessage(line, 10000);
                }
            });
    connect(w, &TrainingWorker::experimentPlanned, this,
            [this](qint64 experimentId, const QList<qint64>& runIds) {
                runsDone_ = 0;
                ended_.clear();
                experimentCancelled_ = false;
                runsTotal_ = static_cast<int>(runIds.size());
                queue_ = runIds;
                runPosition_ = 0;
                begun_.clear();
                updateActions();
                session_->pollNow();  // the tree learns the new runs before they are ticked
                runs_->setCheckedRuns(runIds);
                compare_->revealExperiment(experimentId);
                tabs_->setCurrentWidget(compare_);
            });
    connect(w, &TrainingWorker::runStarted, this, [this](qint64 runId) {
        currentRun_ = runId;
        running_.insert(runId);
        currentEta_ = std::numeric_limits<double>::quiet_NaN();
        begun_.insert(runId);
        updateActions();
        const qsizetype at = queue_.indexOf(runId);
        runPosition_ = at >= 0 ? static_cast<int>(at) + 1 : runsDone_ + 1;
        if (running_.size() > 1) {
            // Side by side (packed or fused seeds): the runs in training, not the last.
            statusBar()->showMessage(tr("Training %1 of %2 together (%3 at once)\u2026")
                                         .arg(runPlaces())
                                         .arg(runsTotal_)
                                         .arg(running_.size()));
        } else {
            statusBar()->showMessage(tr("Training run %1 of %2 (run #%3)\u2026")
                                         .arg(runPosition_)
                                         .arg(runsTotal_)
                                         .arg(runId));
        }
        showRunProgress();
    });
    connect(w, &TrainingWorker::progress, this,
            [this](qint64 runId, qint64 step, qint64 planned, double eta) {
                runs_->setLiveSteps(runId, step, planned);  // what the list, bar and Cancel show
                if (runId == currentRun_) {
                    currentEta_ = eta;
                }
                showRunProgress();
            });
    connect(w, &TrainingWorker::runFinished, this,
            [this](qint64 runId, run::RunStatus status, const QString& error) {
                ++runsDone_;
                ended_.insert(runId, status);
                begun_.insert(runId);
                running_.remove(runId);
                if (runId == currentRun_) {
                    // Side by side, another run may still train: it becomes the one
                    // Cancel asks about.
                    currentRun_ = 0;
                    for (qint64 id : queue_) {
                        if (running_.contains(id)) {
                            currentRun_ = id;
                            const qsizetype at = queue_.indexOf(id);
                            runPosition_ = static_cast<int>(at) + 1;
                            break;
                        }
                    }
                }
                updateActions();
                session_->pollNow();
                if (status == run::RunStatus::Failed) {
                    showError(tr("Run #%1 failed").arg(runId), error);
                }
            });
    connect(w, &TrainingWorker::experimentFinished, this, [this](qint64, bool cancelled) {
        session_->pollNow();
        statusBar()->showMessage(endOfExperiment(cancelled), 10000);
    });
    connect(w, &TrainingWorker::note, this,
            [this](const QString& line) { statusBar()->showMessage(line, 15000); });
    connect(w, &TrainingWorker::setupFailed, this, [this](const train::SetupReport& report) {
        editor_->showSetupProblems(report);  // on their fields, beside the model's facts
    });
    connect(w, &TrainingWorker::failed, this, [this](const QString& message) {
        session_->pollNow();
        showError(tr("Cannot run the experiment"), message);
    });
}

void MainWindow::showRunProgress() {
    // Every count from the run list: the bar, its text and the list agree.
    double inRuns = 0;
    for (qint64 id : std::as_const(running_)) {
        const RunTreeModel::Steps s = runs_->stepsOf(id);
        inRuns += s.planned > 0 ? std::min(1.0, static_cast<double>(s.done) / s.planned) : 0.0;
    }
    const double done = runsTotal_ > 0 ? (runsDone_ + inRuns) / runsTotal_ : 0.0;
    progress_->setValue(static_cast<int>(std::lround(done * 1000)));
    const RunTreeModel::Steps now = runs_->stepsOf(currentRun_);
    const QString etaText = std::isfinite(currentEta_)
                                ? QString::fromStdString(analysis::formatDuration(currentEta_))
                                : QStringLiteral("\u2013");
    const QString stepText =
        now.planned > 0 ? tr("step %1/%2").arg(now.done).arg(now.planned) : tr("starting");
    const QString runText = running_.size() > 1
                                ? tr("%1 of %2 at once").arg(runPlaces()).arg(runsTotal_)
                                : tr("run %1/%2").arg(runPosition_).arg(runsTotal_);
    progress_->setFormat(tr("%1 \u00b7 %2 \u00b7 ETA %3").arg(runText, stepText, etaText));
}

QString MainWindow::runPlaces() const {
    // The places in the queue of the runs training now: "runs 4-6", or "runs 1, 3, 5"
    // where they are not next to each other.
    QList<int> places;
    for (qint64 id : std::as_const(running_)) {
        const qsizetype at = queue_.indexOf(id);
        if (at >= 0) {
            places.append(static_cast<int>(at) + 1);
        }
    }
    std::sort(places.begin(), places.end());
    if (places.isEmpty()) {
        return tr("runs");
    }
    if (places.last() - places.first() + 1 == places.size()) {
        return tr("runs %1\u2013%2").arg(places.first()).arg(places.last());
    }
    QStringList parts;
    for (int p : places) {
        parts << QString::number(p);
    }
    return tr("runs %1").arg(parts.join(QStringLiteral(", ")));
}

QString MainWindow::endOfExperiment(bool cancelled) const {
    int finished = 0, cancelledRuns = 0, failed = 0;
    for (run::RunStatus st : ended_) {
        finished += st == run::RunStatus::Finished ? 1 : 0;
        cancelledRuns += st == run::RunStatus::Cancelled ? 1 : 0;
        failed += st == run::RunStatus::Failed ? 1 : 0;
    }
    const int notStarted = std::max(0, runsTotal_ - static_cast<int>(ended_.size()));
    QStringList parts;
    parts << tr("%n run(s) finished", nullptr, finished);
    if (cancelledRuns + notStarted > 0) {
        parts << tr("%1 cancelled").arg(cancelledRuns + notStarted);
    }
    if (failed > 0) {
        parts << tr("%1 failed").arg(failed);
    }
    const QString counts = parts.join(QStringLiteral(", "));
    if (cancelled || experimentCancelled_ || (finished == 0 && cancelledRuns + notStarted > 0)) {
        return tr("Experiment cancelled: %1").arg(counts);
    }
    if (cancelledRuns + notStarted + failed > 0) {
        return tr("Experiment ended: %1").arg(counts);
    }
    return tr("Experiment finished: %1").arg(counts);
}

// Runs another program (ampbench-cli, a second window) starts on this database.
void MainWindow::buildNewRunsNotice() {
    newRuns_ = new QPushButton;
    newRuns_->setObjectName("newRunsButton");
    newRuns_->setFlat(true);
    newRuns_->setVisible(false);
    statusBar()->addPermanentWidget(newRuns_);
    connect(newRuns_, &QPushButton::clicked, this, [this] { showAppearedRuns(announced_); });
    // A run announced and then ticked by hand, or gone to the trash, is news no more.
    connect(runs_, &RunTreeModel::checkedRunsChanged, this, [this] {
        if (announced_.isEmpty()) {
            return;
        }
        const QList<qint64> checked = runs_->checkedRuns();
        announced_.removeIf([&](qint64 id) { return checked.contains(id) || !runs_->runItem(id); });
        if (announced_.isEmpty()) {
            forgetAnnouncedRuns();
        } else {
            newRuns_->setText(
                tr("%n new run(s): show", nullptr, static_cast<int>(announced_.size())));
        }
    });
}

void MainWindow::announceRuns(const QList<qint64>& ids) {
    if (ids.isEmpty() || training_->isRunning()) {
        return;  // the window's own training shows its runs, and they fill the view
    }
    // Where nothing is plotted there is nothing to take away; a host this window
    // launched on was asked for.
    if (runs_->checkedRuns().isEmpty() || remoteActive()) {
        showAppearedRuns(ids);
        return;
    }
    QStringList experiments;
    for (qint64 id : ids) {
        if (!announced_.contains(id)) {
            announced_ << id;
        }
    }
    for (qint64 id : announced_) {
        if (QStandardItem* run = runs_->runItem(id); run && run->parent()) {
            const QString name = run->parent()->text();
            if (!experiments.contains(name)) {
                experiments << name;
            }
        }
    }
    const QString where = experiments.join(QStringLiteral(", "));
    newRuns_->setText(tr("%n new run(s): show", nullptr, static_cast<int>(announced_.size())));
    newRuns_->setToolTip(tr("Another program started runs on this database (%1). The plots "
                            "and the verdict stay on what you are reading until you click.")
                             .arg(where));
    newRuns_->setVisible(true);
    statusBar()->showMessage(
        tr("%n new run(s) in %1, started by another program", nullptr, static_cast<int>(ids.size()))
            .arg(where),
        15000);
}

void MainWindow::showAppearedRuns(const QList<qint64>& ids) {
    const QList<qint64> show = ids;  // ids may be announced_, cleared below
    forgetAnnouncedRuns();
    if (show.isEmpty()) {
        return;
    }
    runs_->setCheckedRuns(show);
    if (QStandardItem* run = runs_->runItem(show.first()); run && run->parent()) {
        compare_->revealExperiment(run->parent()->data(RunTreeModel::IdRole).toLongLong());
    }
}

void MainWindow::forgetAnnouncedRuns() {
    announced_.clear();
    if (newRuns_) {
        newRuns_->setVisible(false);
    }
}

}  // namespace ampbench::ui
