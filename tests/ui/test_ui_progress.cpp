// What the window says of the training: the progress bar, the run list's steps and
// the Cancel question from one source; a Cancel answered late acting on the run it
// named; the status bar's last word on an experiment that had a run cancelled.
#include <QAction>
#include <QProgressBar>
#include <QStatusBar>
#include <QtTest>
#include <cmath>
#include <limits>

#include "UiTestSupport.h"
#include "core/store/Database.h"
#include "ui/MetaTypes.h"
#include "ui/data/StoreSession.h"
#include "ui/editor/ExperimentEditor.h"
#include "ui/runs/CompareView.h"
#include "ui/runs/RunTreeModel.h"
#include "ui/training/TrainingController.h"
#include "ui/training/TrainingWorker.h"

using namespace ampbench;
using namespace ampbench::ui;

namespace {

constexpr int kTrainTimeoutMs = 120000;

std::vector<run::StepRecord> steps(int64_t from, int64_t to) {
    std::vector<run::StepRecord> out;
    for (int64_t s = from; s <= to; ++s) {
        run::StepRecord r;
        r.step = s;
        r.samples = 32 * s;
        r.loss = 1.0;
        out.push_back(r);
    }
    return out;
}

}  // namespace

class ProgressTest : public QObject {
    Q_OBJECT
  private Q_SLOTS:
    void initTestCase() { registerMetaTypes(); }

    // The bar heard step 1 last while the database holds 6: both say 6, as the run
    // list does; an experiment with a run cancelled does not end "finished".
    void theBarAndTheRunListShowOneStepAndACancelIsSaid() {
        test::Workspace ws;
        QVERIFY(ws.open());
        auto db = store::Database::open(ws.dbPath().toStdString());
        const int64_t e = db->createExperiment("progress", "{}");
        const int64_t a = db->createRun(e, "fp32", 0, 1, "{}", 12);
        const int64_t b = db->createRun(e, "fp32", 0, 2, "{}", 12);
        ws.window->session()->pollNow();
        TrainingWorker* worker = ws.window->training()->worker();
        const double nan = std::numeric_limits<double>::quiet_NaN();
        Q_EMIT worker->experimentPlanned(e, {a, b});
        db->markRunning(a, "{}");
        Q_EMIT worker->runStarted(a);
        Q_EMIT worker->progress(a, 1, 12, nan);
        db->insertSteps(a, steps(1, 6));  // recorded since, not yet heard
        ws.window->session()->pollNow();
        QApplication::processEvents();
        auto* bar = ws.window->findChild<QProgressBar*>("trainingProgress");
        QVERIFY(bar);
        QStandardItem* row = ws.window->runModel()->runItem(a);
        QVERIFY(row);
        const QString inTree = row->parent()->child(row->row(), RunTreeModel::StepsColumn)->text();
        QCOMPARE(inTree, QStringLiteral("6 / 12"));
        QVERIFY2(bar->format().contains(QStringLiteral("step 6/12")), qPrintable(bar->format()));
        // A later word from the run moves both.
        Q_EMIT worker->progress(a, 9, 12, nan);
        QApplication::processEvents();
        QCOMPARE(row->parent()->child(row->row(), RunTreeModel::StepsColumn)->text(),
                 QStringLiteral("9 / 12"));
        QVERIFY2(bar->format().contains(QStringLiteral("step 9/12")), qPrintable(bar->format()));

        // One run cancelled alone, the other finished: the experiment is not "finished".
        db->finishRun(a, run::RunStatus::Cancelled, "cancelled");
        Q_EMIT worker->runFinished(a, run::RunStatus::Cancelled, QString());
        db->markRunning(b, "{}");
        Q_EMIT worker->runStarted(b);
        db->insertSteps(b, steps(1, 12));
        db->finishRun(b, run::RunStatus::Finished, "");
        Q_EMIT worker->progress(b, 12, 12, nan);
        Q_EMIT worker->runFinished(b, run::RunStatus::Finished, QString());
        Q_EMIT worker->experimentFinished(e, false);
        QApplication::processEvents();
        const QString said = ws.window->statusBar()->currentMessage();
        QVERIFY2(said.contains(QStringLiteral("1 cancelled")) &&
                     !said.startsWith(QStringLiteral("Experiment finished")),
                 qPrintable(said));
    }

    // The question names run A; the queue trains on while it is open, and A ends
    // before the answer: "this run" then cancels nothing, and says that A had ended.
    void aLateAnswerActsOnTheRunItNamedOrSaysItEnded() {
        test::Workspace ws;
        QVERIFY(ws.open());
        config::ExperimentSpec spec = test::tinySpec(24);
        spec.arms.resize(1);
        spec.seeds = {1, 2, 3};
        ws.window->editor()->setSpec(spec);
        TrainingWorker* worker = ws.window->training()->worker();
        QSignalSpy planned(worker, &TrainingWorker::experimentPlanned);
        QSignalSpy started(worker, &TrainingWorker::runStarted);
        QSignalSpy ended(worker, &TrainingWorker::runFinished);
        QSignalSpy finished(worker, &TrainingWorker::experimentFinished);
        QString question;
        qint64 named = 0;
        ws.window->setCancelChooser([&](const QString& q, int) {
            question = q;
            // The user looks away: the run asked about ends, the next one starts, and the
            // window hears both.
            [&] {
                QTRY_VERIFY_WITH_TIMEOUT(
                    ws.window->currentRun() != named && ws.window->currentRun() != 0,
                    kTrainTimeoutMs);
                QVERIFY(!ended.isEmpty());
                QCOMPARE(ended[0][0].toLongLong(), named);
            }();
            return MainWindow::CancelChoice::ThisRun;
        });
        QVERIFY(ws.window->runExperiment());
        QTRY_VERIFY_WITH_TIMEOUT(ws.window->currentRun() != 0, kTrainTimeoutMs);
        const auto ids = planned[0][1].value<QList<qint64>>();
        QCOMPARE(ids.size(), 3);
        named = ws.window->currentRun();
        QCOMPARE(named, ids[0]);
        ws.window->cancelAction()->trigger();
        QVERIFY2(question.contains(QStringLiteral("#%1").arg(named)), qPrintable(question));
        const QString said = ws.window->statusBar()->currentMessage();
        QVERIFY2(said.contains(QStringLiteral("#%1").arg(named)) &&
                     said.contains(QStringLiteral("already")),
                 qPrintable(said));
        QTRY_VERIFY_WITH_TIMEOUT(!finished.isEmpty(), kTrainTimeoutMs);
        QCOMPARE(finished[0][1].toBool(), false);
        auto db = store::Database::open(ws.dbPath().toStdString(), store::Database::Mode::ReadOnly);
        for (qint64 id : ids) {
            QVERIFY2(db->run(id)->status == run::RunStatus::Finished,
                     qPrintable(QStringLiteral("run %1 did not finish").arg(id)));
        }
    }
};

QTEST_MAIN(ProgressTest)
#include "test_ui_progress.moc"
