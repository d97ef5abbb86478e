// Training scripts from the window: every arm with live rows and a verdict, a script's
// run cancelled alone, with the queue or beside another, and a missing interpreter.
#include <signal.h>
#include <QtTest>

#include "TrainingTestSupport.h"

using namespace ampbench;
using namespace ampbench::ui;
using namespace ampbench::ui::training_test;

class TrainingScriptsTest : public QObject {
    Q_OBJECT
  private Q_SLOTS:
    void initTestCase() { registerMetaTypes(); }

    // A spec whose model is `script`: the user's Python loop trains each run from the
    // desktop, its records streaming into the planned runs as they come.
    void aTrainingScriptTrainsEveryArmWithLiveRowsAndAVerdict() {
        if (!pythonImports("torch")) {
            QSKIP("/usr/bin/python3 has no torch (apt-get install python3-torch)");
        }
        if (!QFileInfo::exists(QStringLiteral("/usr/share/datasets/fashion-mnist"))) {
            QSKIP("Fashion-MNIST is not at /usr/share/datasets/fashion-mnist");
        }
        test::Workspace ws;
        QVERIFY(ws.open());
        ws.window->editor()->setSpec(
            scriptSpec(AMPBENCH_EXAMPLE_SCRIPT, "--train-samples 512 --eval-samples 256", {1}, 6));
        QTRY_VERIFY_WITH_TIMEOUT(!ws.window->editor()->checking(), kTrainTimeoutMs);
        QVERIFY2(ws.window->runAction()->isEnabled(), qPrintable(errorText(*ws.window->editor())));

        TrainingWorker* worker = ws.window->training()->worker();
        QSignalSpy planned(worker, &TrainingWorker::experimentPlanned);
        QSignalSpy started(worker, &TrainingWorker::runStarted);
        QSignalSpy finishedRuns(worker, &TrainingWorker::runFinished);
        QSignalSpy finished(worker, &TrainingWorker::experimentFinished);
        QSignalSpy failed(worker, &TrainingWorker::failed);
        // Live: each run's progress arrives while it trains, before its end.
        QMap<qint64, int> progressBeforeEnd;
        QSet<qint64> ended;
        connect(worker, &TrainingWorker::progress, this, [&](qint64 id, qint64, qint64, double) {
            if (!ended.contains(id)) {
                ++progressBeforeEnd[id];
            }
        });
        connect(worker, &TrainingWorker::runFinished, this,
                [&](qint64 id, run::RunStatus, const QString&) { ended.insert(id); });

        QVERIFY(ws.window->runExperiment());
        QTRY_VERIFY_WITH_TIMEOUT(!finished.isEmpty() || !failed.isEmpty(), kTrainTimeoutMs);
        QVERIFY2(failed.isEmpty(), failed.isEmpty() ? "" : qPrintable(failed[0][0].toString()));
        QCOMPARE(finished[0][1].toBool(), false);
        const auto ids = planned[0][1].value<QList<qint64>>();
        QCOMPARE(ids.size(), 2);
        QCOMPARE(started.size(), 2);
        QCOMPARE(finishedRuns.size(), 2);
        for (const auto& args : finishedRuns) {
            QVERIFY2(args[1].value<run::RunStatus>() == run::RunStatus::Finished,
                     qPrintable(args[2].toString()));
        }
        QTRY_COMPARE(ended.size(), 2);  // queued to this thread after the spies'
        for (qint64 id : ids) {
            QVERIFY2(progressBeforeEnd.value(id) > 0, qPrintable(QString::number(id)));
        }

        // The rows the script recorded are the runs' own, read back from the file.
        auto db = store::Database::open(ws.dbPath().toStdString(), store::Database::Mode::ReadOnly);
        const auto stored =
            nlohmann::json::parse(db->experiment(finished[0][0].toLongLong())->spec_json);
        QCOMPARE(QString::fromStdString(stored.at("model").at("name")), QStringLiteral("script"));
        for (qint64 id : ids) {
            const auto row = db->run(id);
            QVERIFY(row->status == run::RunStatus::Finished);
            const auto steps = db->steps(id);
            QCOMPARE(steps.size(), size_t(6));
            for (size_t i = 0; i < steps.size(); ++i) {
                QCOMPARE(steps[i].step, int64_t(i + 1));
                QVERIFY(std::isfinite(steps[i].loss));
                QVERIFY(steps[i].step_ms > 0);
            }
            QCOMPARE(steps.back().samples, int64_t(6 * 32));
            const auto evals = db->evals(id);
            QCOMPARE(evals.size(), size_t(1));
            QVERIFY(evals[0].val_accuracy > 0 && evals[0].val_accuracy <= 1);
        }
        // bf16 autocast really ran in the bf16 arm: its losses are not fp32's.
        QVERIFY(db->steps(ids[0]).back().loss != db->steps(ids[1]).back().loss);

        // In the window as a built-in experiment is: plotted and judged.
        QTRY_VERIFY(ws.window->runAction()->isEnabled());
        ws.window->session()->pollNow();
        QTRY_COMPARE(ws.window->cache()->runs(), ids);
        PlotsView* plots = ws.window->compare()->plots();
        plots->redrawNow();
        QCOMPARE(plots->lossPlot()->curves().size(), 2);
        QCOMPARE(plots->lossPlot()->curves()[0]->data()->size(), 6);
        QTRY_COMPARE_WITH_TIMEOUT(ws.window->compare()->verdictExperiment(),
                                  finished[0][0].toLongLong(), 20000);
        const QString verdict = ws.window->compare()->verdictPanel()->plainText();
        QVERIFY2(verdict.contains(QStringLiteral("bf16")), qPrintable(verdict));
    }

    void aTrainingScriptRunCanBeCancelledAloneOrWithTheQueue() {
        if (!pythonImports("ampbench")) {
            QSKIP("/usr/bin/python3 does not run");
        }
        test::Workspace ws;
        QVERIFY(ws.open());
        ws.window->editor()->setSpec(slowScriptSpec(ws, {1, 2, 3}));
        MainWindow::CancelChoice answer = MainWindow::CancelChoice::ThisRun;
        ws.window->setCancelChooser([&](const QString&, int) { return answer; });
        WorkerSignals sig(ws.window->training()->worker());

        QVERIFY(ws.window->runExperiment());
        QTRY_VERIFY_WITH_TIMEOUT(
            !sig.progress.isEmpty() && sig.progress.last()[1].toLongLong() >= 3 ||
                !sig.failed.isEmpty(),
            kTrainTimeoutMs);
        QVERIFY2(sig.failed.isEmpty(), sig.failure().constData());
        const auto ids = sig.planned[0][1].value<QList<qint64>>();
        QCOMPARE(ids.size(), 3);
        // This run alone: its script is stopped, the next run's starts.
        ws.window->cancelAction()->trigger();
        QTRY_VERIFY_WITH_TIMEOUT(sig.started.size() >= 2, 60000);
        QCOMPARE(sig.started[1][0].toLongLong(), ids[1]);
        QVERIFY(sig.finished.isEmpty());
        QTRY_VERIFY_WITH_TIMEOUT(!sig.progress.isEmpty() &&
                                     sig.progress.last()[0].toLongLong() == ids[1] &&
                                     sig.progress.last()[1].toLongLong() >= 3,
                                 60000);
        // Then everything: the last run never starts.
        answer = MainWindow::CancelChoice::Everything;
        ws.window->cancelAction()->trigger();
        QTRY_VERIFY_WITH_TIMEOUT(!sig.finished.isEmpty(), 60000);
        QCOMPARE(sig.finished[0][1].toBool(), true);
        QCOMPARE(sig.started.size(), 2);

        auto db = store::Database::open(ws.dbPath().toStdString(), store::Database::Mode::ReadOnly);
        for (int i = 0; i < 2; ++i) {
            const auto row = db->run(ids[i]);
            QVERIFY2(row->status == run::RunStatus::Cancelled,
                     qPrintable(QString::fromStdString(row->error)));
            QVERIFY(db->stepCount(ids[i]) >= 3);  // every row it recorded is kept
        }
        QVERIFY(db->run(ids[2])->status == run::RunStatus::Cancelled);
        QCOMPARE(db->stepCount(ids[2]), int64_t(0));
        // The script's process ended with its run.
        bool ok = false;
        QFile file(pidFileOf(ws));
        QVERIFY(file.open(QIODevice::ReadOnly));
        const pid_t pid = static_cast<pid_t>(file.readAll().trimmed().toLongLong(&ok));
        QVERIFY(ok && pid > 0);
        QTRY_VERIFY(::kill(pid, 0) != 0);
        QTRY_VERIFY(ws.window->runAction()->isEnabled());
    }

    // Scripts packed side by side (runs_per_gpu on the CPU) each have a token of their
    // own: "cancel this run" stops that script alone while the other trains on, and
    // Cancel then stops the rest.
    void aPackedScriptRunCanBeCancelledAlone() {
        if (!pythonImports("ampbench")) {
            QSKIP("/usr/bin/python3 does not run");
        }
        test::Workspace ws;
        QVERIFY(ws.open());
        config::ExperimentSpec spec = slowScriptSpec(ws, {1, 2});
        spec.runs_per_gpu = 2;
        ws.window->editor()->setSpec(spec);
        MainWindow::CancelChoice answer = MainWindow::CancelChoice::ThisRun;
        ws.window->setCancelChooser([&](const QString&, int) { return answer; });
        WorkerSignals sig(ws.window->training()->worker());
        QVERIFY(ws.window->runExperiment());
        QTRY_VERIFY_WITH_TIMEOUT(sig.started.size() == 2 || !sig.failed.isEmpty(), kTrainTimeoutMs);
        QVERIFY2(sig.failed.isEmpty(), sig.failure().constData());
        const auto ids = sig.planned[0][1].value<QList<qint64>>();
        QCOMPARE(ids.size(), 2);
        QTRY_VERIFY_WITH_TIMEOUT(sig.stepsOf(ids[0]) >= 3 && sig.stepsOf(ids[1]) >= 3,
                                 kTrainTimeoutMs);
        // The first run alone: the window is asked until it has heard the run start.
        QTRY_VERIFY_WITH_TIMEOUT(ws.window->cancelRunningRun(ids[0]), kUiPatienceMs);
        QTRY_VERIFY_WITH_TIMEOUT(!sig.runEnded.isEmpty(), 60000);
        QCOMPARE(sig.runEnded[0][0].toLongLong(), ids[0]);
        QVERIFY(sig.runEnded[0][1].value<run::RunStatus>() == run::RunStatus::Cancelled);
        // The other trains on.
        const qint64 before = sig.stepsOf(ids[1]);
        QTRY_VERIFY_WITH_TIMEOUT(sig.stepsOf(ids[1]) > before + 2, 60000);
        QVERIFY(sig.finished.isEmpty());
        // Then everything.
        answer = MainWindow::CancelChoice::Everything;
        ws.window->cancelAction()->trigger();
        QTRY_VERIFY_WITH_TIMEOUT(!sig.finished.isEmpty(), 60000);
        QCOMPARE(sig.finished[0][1].toBool(), true);
        auto db = store::Database::open(ws.dbPath().toStdString(), store::Database::Mode::ReadOnly);
        for (qint64 id : ids) {
            QVERIFY(db->run(id)->status == run::RunStatus::Cancelled);
            QVERIFY(db->stepCount(id) >= 3);  // every row it recorded is kept
        }
    }

    // Runs side by side: "Cancel it and the 4 queued" cancels the run it names and the 4
    // queued runs, and the run training beside it goes on (it was cancelled too: 6, not
    // 5); each answer lists exactly the runs it cancels.
    void cancellingARunAndTheQueueLeavesTheRunBesideIt() {
        if (!pythonImports("ampbench")) {
            QSKIP("/usr/bin/python3 does not run");
        }
        test::Workspace ws;
        QVERIFY(ws.open());
        config::ExperimentSpec spec = slowScriptSpec(ws, {1, 2, 3, 4, 5, 6});
        spec.runs_per_gpu = 2;
        ws.window->editor()->setSpec(spec);
        QList<MainWindow::CancelOption> offered;
        ws.window->setCancelChooser([&](const QString&, int) {
            offered = ws.window->cancelOptions(ws.window->currentRun());
            return MainWindow::CancelChoice::ThisAndQueued;
        });
        WorkerSignals sig(ws.window->training()->worker());
        QVERIFY(ws.window->runExperiment());
        QTRY_VERIFY_WITH_TIMEOUT(sig.started.size() == 2 || !sig.failed.isEmpty(), kTrainTimeoutMs);
        QVERIFY2(sig.failed.isEmpty(), sig.failure().constData());
        const auto ids = sig.planned[0][1].value<QList<qint64>>();
        QCOMPARE(ids.size(), 6);
        const qint64 first = sig.started[0][0].toLongLong(),
                     beside = sig.started[1][0].toLongLong();
        QTRY_VERIFY_WITH_TIMEOUT(sig.stepsOf(first) >= 2 && sig.stepsOf(beside) >= 2,
                                 kTrainTimeoutMs);
        QTRY_VERIFY(ws.window->currentRun() != 0 && ws.window->queuedRuns().size() == 4);
        const qint64 asked = ws.window->currentRun();
        const qint64 other = asked == first ? beside : first;
        ws.window->cancelAction()->trigger();
        // What was offered: this run; it and the 4 queued; all 6.
        QCOMPARE(offered.size(), 3);
        for (const auto& o : offered) {
            if (o.choice == MainWindow::CancelChoice::ThisAndQueued) {
                QCOMPARE(o.runs.size(), 5);
                QVERIFY(o.runs.contains(asked) && !o.runs.contains(other));
                QVERIFY2(o.label.contains(QStringLiteral("4 queued")), qPrintable(o.label));
            }
            if (o.choice == MainWindow::CancelChoice::Everything) {
                QCOMPARE(o.runs.size(), 6);
                QVERIFY2(o.label.contains(QStringLiteral("all 6")), qPrintable(o.label));
            }
        }
        // The run asked about and the 4 queued end cancelled (those never start), and
        // the other trains on.
        QTRY_VERIFY_WITH_TIMEOUT(sig.runEnded.size() >= 5, 60000);
        const qint64 before = sig.stepsOf(other);
        QTRY_VERIFY_WITH_TIMEOUT(sig.stepsOf(other) > before + 2, 60000);
        QCOMPARE(sig.runEnded.size(), 5);
        for (const auto& ended : sig.runEnded) {
            QVERIFY(ended[0].toLongLong() != other);
            QVERIFY(ended[1].value<run::RunStatus>() == run::RunStatus::Cancelled);
        }
        QCOMPARE(sig.started.size(), 2);
        QVERIFY(sig.finished.isEmpty());
        QVERIFY(ws.window->cancelRunningRun(other));  // then the last one, alone
        QTRY_VERIFY_WITH_TIMEOUT(!sig.finished.isEmpty(), 60000);
        auto db = store::Database::open(ws.dbPath().toStdString(), store::Database::Mode::ReadOnly);
        int cancelled = 0;
        for (qint64 id : ids) {
            cancelled += db->run(id)->status == run::RunStatus::Cancelled ? 1 : 0;
            if (id != asked && id != other) {
                QCOMPARE(db->stepCount(id), int64_t(0));  // never started
            }
        }
        QCOMPARE(cancelled, 6);
        QVERIFY(db->stepCount(other) > before);
    }

    // The interpreter the spec names is the one that runs: one that is not there is
    // named on its field before anything is planned.
    void aTrainingScriptsMissingInterpreterIsNamedOnItsField() {
        test::Workspace ws;
        QVERIFY(ws.open());
        config::ExperimentSpec spec =
            scriptSpec(QStringLiteral(AMPBENCH_TEST_SCRIPTS "/slow_steps.py"), "x", {1}, 4);
        spec.model.python = ws.dir.filePath(QStringLiteral("no-such-python")).toStdString();
        ws.window->editor()->setSpec(spec);
        QTRY_VERIFY_WITH_TIMEOUT(
            ws.window->editor()->fieldWidget("model.python")->property("invalid").toBool(),
            kTrainTimeoutMs);
        QVERIFY(!ws.window->runAction()->isEnabled());
        const QString problems = errorText(*ws.window->editor());
        QVERIFY2(problems.contains(QStringLiteral("no-such-python")), qPrintable(problems));
        // The worker refuses it too, writing nothing.
        TrainingWorker* worker = ws.window->training()->worker();
        QSignalSpy failed(worker, &TrainingWorker::failed);
        QSignalSpy planned(worker, &TrainingWorker::experimentPlanned);
        QVERIFY(ws.window->training()->start(spec, ws.dbPath()));
        QTRY_VERIFY_WITH_TIMEOUT(!failed.isEmpty(), kTrainTimeoutMs);
        QVERIFY2(failed[0][0].toString().contains(QStringLiteral("model.python")),
                 qPrintable(failed[0][0].toString()));
        QVERIFY(planned.isEmpty());
        auto db = store::Database::open(ws.dbPath().toStdString(), store::Database::Mode::ReadOnly);
        QVERIFY(db->experiments().empty());
    }
};

QTEST_MAIN(TrainingScriptsTest)
#include "test_ui_training_scripts.moc"
