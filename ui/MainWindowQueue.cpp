// The main window's run queue: cancelling the run training now, one run among those
// side by side, or the rest; taking a queued run out; the run list's context menu
// (MainWindow.cpp holds the rest of the window).
#include "ui/MainWindow.h"

#include <QAbstractButton>
#include <QHash>
#include <QMenu>
#include <QMessageBox>
#include <QPushButton>
#include <QStandardItem>
#include <QStatusBar>
#include <QTimer>
#include <QTreeView>
#include <algorithm>

#include "ui/remote/RemoteRun.h"
#include "ui/runs/CompareView.h"
#include "ui/runs/RunTreeModel.h"
#include "ui/training/TrainingController.h"

namespace ampbench::ui {

QString MainWindow::cancelQuestion(qint64 runId) const {
    if (!running_.contains(runId)) {
        return tr("%1 has already ended (%2) while this was open; nothing of it can be "
                  "cancelled now.")
            .arg(runName(runId), endedWord(runId));
    }
    const int queued = static_cast<int>(queuedRuns().size());
    const RunTreeModel::Steps at = runs_->stepsOf(runId);
    const QString where = at.planned > 0 ? tr(" is at step %1 of %2").arg(at.done).arg(at.planned)
                                         : tr(" is starting");
    QString question =
        tr("%1%2. Its steps so far are kept, but it ends cancelled and the verdict leaves it "
           "out.")
            .arg(runName(runId), where);
    if (const int beside = static_cast<int>(running_.size()) - 1; beside > 0) {
        question += ' ' + (beside == 1 ? tr("One more run trains beside it (right-click a run in "
                                            "the run list to cancel that one alone).")
                                       : tr("%1 more runs train beside it (right-click a run in "
                                            "the run list to cancel that one alone).")
                                             .arg(beside));
    }
    if (queued > 0) {
        question +=
            ' ' + (queued == 1 ? tr("One more run is queued behind it: it will not start if "
                                    "you cancel it too.")
                               : tr("%1 more runs are queued behind it: they will not "
                                    "start if you cancel them too.")
                                     .arg(queued));
    }
    return question;
}

QList<MainWindow::CancelOption> MainWindow::cancelOptions(qint64 runId) const {
    QList<CancelOption> out;
    if (!running_.contains(runId) || !training_->isRunning()) {
        return out;
    }
    const QList<qint64> queued = queuedRuns();
    QList<qint64> beside;
    for (qint64 id : running_) {
        if (id != runId) {
            beside << id;
        }
    }
    const bool others = !queued.isEmpty() || !beside.isEmpty();
    out.append({CancelChoice::ThisRun,
                others ? tr("Cancel this run; the others go on") : tr("Cancel the run"),
                {runId}});
    if (!queued.isEmpty()) {
        // With no run beside it, this is everything there is.
        out.append({beside.isEmpty() ? CancelChoice::Everything : CancelChoice::ThisAndQueued,
                    tr("Cancel it and the %n queued", nullptr, static_cast<int>(queued.size())),
                    QList<qint64>{runId} + queued});
    }
    if (!beside.isEmpty()) {
        QList<qint64> all = QList<qint64>{runId} + beside + queued;
        out.append(
            {CancelChoice::Everything,
             tr("Cancel all %n (those beside it too)", nullptr, static_cast<int>(all.size())),
             all});
    }
    return out;
}

QString MainWindow::endedWord(qint64 runId) const {
    const auto it = ended_.constFind(runId);
    return it == ended_.constEnd() ? tr("ended")
                                   : QString::fromStdString(run::toString(it.value()));
}

void MainWindow::cancelRun() {
    if (remoteActive()) {
        remote_->cancel();
        return;
    }
    if (currentRun_ == 0 || !training_->isRunning()) {
        training_->cancel();  // a max-batch search, or between runs: all at once
        statusBar()->showMessage(tr("Cancelling\u2026"));
        return;
    }
    // The question is about this run, by its id, however long it stays open.
    const qint64 asked = currentRun_;
    const int queued = static_cast<int>(queuedRuns().size());
    CancelChoice choice = CancelChoice::Everything;
    if (chooseCancel_) {
        choice = chooseCancel_(cancelQuestion(asked), queued);
    } else if (messageBoxes_) {
        // A button per answer, each saying what it cancels, and nothing more is done.
        QMessageBox box(QMessageBox::Question, tr("Cancel training"), cancelQuestion(asked),
                        QMessageBox::NoButton, this);
        QHash<QAbstractButton*, CancelChoice> answers;
        for (const CancelOption& o : cancelOptions(asked)) {
            answers.insert(box.addButton(o.label, o.choice == CancelChoice::ThisRun
                                                      ? QMessageBox::AcceptRole
                                                      : QMessageBox::DestructiveRole),
                           o.choice);
        }
        QPushButton* keep = box.addButton(tr("Keep training"), QMessageBox::RejectRole);
        box.setDefaultButton(keep);
        // While it is open the runs train on: it says where the run it names is now, and
        // each button what it would cancel now.
        QTimer follow;
        follow.setInterval(500);
        connect(&follow, &QTimer::timeout, &box, [&] {
            box.setText(cancelQuestion(asked));
            const QList<CancelOption> now = cancelOptions(asked);
            for (auto it = answers.begin(); it != answers.end(); ++it) {
                const auto same = std::find_if(now.begin(), now.end(), [&](const CancelOption& o) {
                    return o.choice == it.value();
                });
                it.key()->setEnabled(same != now.end());
                if (same != now.end()) {
                    it.key()->setText(same->label);
                }
            }
        });
        follow.start();
        box.exec();
        choice = answers.value(box.clickedButton(), CancelChoice::Keep);
    }
    if (choice == CancelChoice::Keep) {
        return;
    }
    const bool stillTraining = running_.contains(asked) && training_->isRunning();
    if (choice == CancelChoice::ThisRun || choice == CancelChoice::ThisAndQueued) {
        QStringList done;
        if (!stillTraining) {
            done << tr("%1 had already ended (%2) when you answered")
                        .arg(runName(asked), endedWord(asked));
        } else if (cancelRunningRun(asked)) {
            done << tr("cancelling %1").arg(runName(asked));
        }
        if (choice == CancelChoice::ThisAndQueued) {
            // The queued runs are taken out; the runs training beside it go on.
            int removed = 0;
            for (qint64 id : queuedRuns()) {
                if (training_->removeQueued(id)) {
                    begun_.insert(id);
                    ++removed;
                }
            }
            done << tr("%n queued run(s) taken out", nullptr, removed);
            if (const int beside = static_cast<int>(running_.size()) - (stillTraining ? 1 : 0);
                beside > 0) {
                done << tr("%n beside it go(es) on", nullptr, beside);
            }
            updateActions();
        } else if (!stillTraining) {
            done << tr("nothing was cancelled");
        }
        if (!done.isEmpty() && (choice == CancelChoice::ThisAndQueued || !stillTraining)) {
            done.first()[0] = done.first()[0].toUpper();
            statusBar()->showMessage(done.join(QStringLiteral("; ")), 15000);
        }
        return;
    }
    if (!training_->isRunning()) {
        statusBar()->showMessage(
            tr("The experiment had already ended when you answered; nothing was cancelled"), 15000);
        return;
    }
    experimentCancelled_ = true;
    training_->cancel();
    statusBar()->showMessage(stillTraining
                                 ? tr("Cancelling\u2026")
                                 : tr("%1 had already ended (%2); cancelling the runs still "
                                      "training or queued\u2026")
                                       .arg(runName(asked), endedWord(asked)));
}

bool MainWindow::cancelCurrentRun() {
    return cancelRunningRun(currentRun_);
}

bool MainWindow::cancelRunningRun(qint64 runId) {
    if (runId == 0 || !running_.contains(runId) || !training_->isRunning()) {
        return false;
    }
    if (!training_->cancelRun(runId)) {
        statusBar()->showMessage(
            tr("%1 has no stop of its own (its trainer did not give one) and stops only with "
               "the others: Run \u203a Cancel stops them all")
                .arg(runName(runId)),
            10000);
        return false;
    }
    statusBar()->showMessage(tr("Cancelling %1; the other runs go on\u2026").arg(runName(runId)));
    return true;
}

bool MainWindow::removeQueuedRun(qint64 runId) {
    if (!queuedRuns().contains(runId) || !training_->removeQueued(runId)) {
        statusBar()->showMessage(
            tr("%1 is not waiting in the queue here (it has started or ended)").arg(runName(runId)),
            10000);
        return false;
    }
    begun_.insert(runId);
    statusBar()->showMessage(tr("%1 removed from the queue").arg(runName(runId)), 10000);
    updateActions();
    return true;
}

QList<qint64> MainWindow::queuedRuns() const {
    QList<qint64> out;
    if (!training_->isRunning()) {
        return out;
    }
    for (qint64 id : queue_) {
        if (!begun_.contains(id)) {
            out.append(id);
        }
    }
    return out;
}

QString MainWindow::runName(qint64 runId) const {
    if (QStandardItem* item = runs_->runItem(runId)) {
        return tr("Run #%1 (%2)").arg(runId).arg(item->text());
    }
    return tr("Run #%1").arg(runId);
}

void MainWindow::fillQueueMenu() {
    queueMenu_->clear();
    for (qint64 id : queuedRuns()) {
        queueMenu_->addAction(runName(id), this, [this, id] { removeQueuedRun(id); });
    }
    if (queueMenu_->isEmpty()) {
        queueMenu_->addAction(tr("No run is waiting"))->setEnabled(false);
    }
}

void MainWindow::showPickerMenu(const QPoint& at) {
    QTreeView* picker = compare_->picker();
    const QModelIndex index = picker->indexAt(at);
    if (!index.isValid() || !index.parent().isValid()) {
        return;  // an experiment, or nothing
    }
    const qint64 id = index.siblingAtColumn(0).data(RunTreeModel::IdRole).toLongLong();
    QMenu menu(this);
    if (running_.contains(id) && training_->isRunning()) {
        menu.addAction(tr("Cancel this run (the others go on)"), this,
                       [this, id] { cancelRunningRun(id); });
    } else if (queuedRuns().contains(id)) {
        menu.addAction(tr("Remove from the queue"), this, [this, id] { removeQueuedRun(id); });
    }
    if (!menu.isEmpty()) {
        menu.exec(picker->viewport()->mapToGlobal(at));
    }
}

}  // namespace ampbench::ui
