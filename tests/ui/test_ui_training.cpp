// The training worker behind the window: a tiny experiment end to end into the
// plots, and Cancel in the middle of a run. Training scripts: test_ui_training_scripts.cpp.
#include <QtTest>

#include "TrainingTestSupport.h"

using namespace ampbench;
using namespace ampbench::ui;
using namespace ampbench::ui::training_test;

// The spies below record in the emitting (training) thread, so a signal can land
// before a wait() would start: tests poll the spies with QTRY_* instead.

class TrainingTest : public QObject {
    Q_OBJECT
  private Q_SLOTS:
    void initTestCase() { registerMetaTypes(); }

    void tinyExperimentEndsInThePlots() {
        test::Workspace ws;
        QVERIFY(ws.open());
        ws.window->editor()->setSpec(test::tinySpec(8));
        QVERIFY(ws.window->runAction()->isEnabled());

        TrainingWorker* worker = ws.window->training()->worker();
        QSignalSpy planned(worker, &TrainingWorker::experimentPlanned);
        QSignalSpy started(worker, &TrainingWorker::runStarted);
        QSignalSpy progress(worker, &TrainingWorker::progress);
        QSignalSpy finishedRuns(worker, &TrainingWorker::runFinished);
        QSignalSpy finished(worker, &TrainingWorker::experimentFinished);
        QSignalSpy failed(worker, &TrainingWorker::failed);
        QSignalSpy errors(ws.window.get(), &MainWindow::errorShown);

        QVERIFY(ws.window->runExperiment());
        QVERIFY(!ws.window->runAction()->isEnabled());  // one experiment at a time
        QVERIFY(ws.window->cancelAction()->isEnabled());
        QVERIFY(!ws.window->runExperiment());
        QTRY_VERIFY_WITH_TIMEOUT(!finished.isEmpty() || !failed.isEmpty(), kTrainTimeoutMs);
        QVERIFY2(failed.isEmpty(), failed.isEmpty() ? "" : qPrintable(failed[0][0].toString()));
        QVERIFY(errors.isEmpty());
        QCOMPARE(finished[0][1].toBool(), false);
        QCOMPARE(planned.size(), 1);
        const auto runIds = planned[0][1].value<QList<qint64>>();
        QCOMPARE(runIds.size(), 3);
        QCOMPARE(started.size(), 3);
        QCOMPARE(finishedRuns.size(), 3);
        for (const auto& args : finishedRuns) {
            QVERIFY(args[1].value<run::RunStatus>() == run::RunStatus::Finished);
        }
        QVERIFY(!progress.isEmpty());
        QTRY_VERIFY(ws.window->runAction()->isEnabled());

        // The runs are ticked and shown: one loss curve per run, one point per step.
        ws.window->session()->pollNow();
        PlotsView* plots = ws.window->compare()->plots();
        QTRY_COMPARE(ws.window->cache()->runs(), runIds);
        plots->redrawNow();
        const auto& curves = plots->lossPlot()->curves();
        QCOMPARE(curves.size(), 3);
        const int expected[] = {8, 8, 2};  // fp32, amp, amp-accum4 (K = 4)
        for (int i = 0; i < 3; ++i) {
            QCOMPARE(curves[i]->data()->size(), expected[i]);
            QVERIFY(curves[i]->name().contains(i == 0 ? "fp32" : "amp"));
        }
        QCOMPARE(plots->validationPlot()->curves().size(), 3);
        QCOMPARE(plots->memoryPlot()->curves().size(), 3);
        QCOMPARE(plots->stepTimePlot()->curves().size(), 3);
        QCOMPARE(ws.window->compare()->summaryModel()->rowCount(), 3);
        const QString tsv = ws.window->compare()->summaryTsv();
        QVERIFY(tsv.startsWith("arm\truns\tmedian step"));
        QCOMPARE(tsv.trimmed().count('\n'), 3);

        // The training thread gave way to the GUI thread; the GUI thread did not.
        int trainingNice = 0;
        QMetaObject::invokeMethod(
            worker, [&] { trainingNice = currentThreadNice(); }, Qt::BlockingQueuedConnection);
#ifdef __linux__
        QVERIFY(trainingNice >= TrainingWorker::kTrainingNice);
        QVERIFY(currentThreadNice() < TrainingWorker::kTrainingNice);
#endif
    }

    void theStatusBarAndTheProgressBarCountRunsAlike() {
        test::Workspace ws;
        QVERIFY(ws.open());
        // The worker's signals as a three-run experiment sends them.
        const auto [experiment, ids, worker, bar] = planByHand(ws, "queue", 3);
        QVERIFY(bar);
        for (int i = 0; i < ids.size(); ++i) {
            const QString place = QStringLiteral("run %1 of 3").arg(i + 1);
            const QString barPlace = QStringLiteral("run %1/3 ").arg(i + 1);
            Q_EMIT worker->runStarted(ids[i]);
            const QString status = ws.window->statusBar()->currentMessage();
            QVERIFY2(status.contains(place), qPrintable(status));
            QVERIFY2(status.contains(QStringLiteral("#%1").arg(ids[i])), qPrintable(status));
            QVERIFY2(bar->format().startsWith(barPlace), qPrintable(bar->format()));
            Q_EMIT worker->progress(ids[i], 4, 8, 2.0);
            QVERIFY2(bar->format().startsWith(barPlace + QStringLiteral("\u00b7 step 4/8")),
                     qPrintable(bar->format()));
            QCOMPARE(bar->value(), static_cast<int>(std::lround((i + 0.5) / 3 * 1000)));
            Q_EMIT worker->runFinished(ids[i], run::RunStatus::Finished, QString());
        }
    }

    void runsTrainingSideBySideAreNamedTogether() {
        test::Workspace ws;
        QVERIFY(ws.open());
        // Seeds 1-3 fused (they start together), then seed 4 alone.
        const auto [experiment, ids, worker, bar] = planByHand(ws, "fused", 4);
        QVERIFY(bar);
        for (int i = 0; i < 3; ++i) {
            Q_EMIT worker->runStarted(ids[i]);
        }
        QString status = ws.window->statusBar()->currentMessage();
        QVERIFY2(status.contains(QStringLiteral("runs 1\u20133 of 4 together (3 at once)")),
                 qPrintable(status));
        for (int i = 0; i < 3; ++i) {
            Q_EMIT worker->progress(ids[i], 4, 8, 2.0);
        }
        QVERIFY2(
            bar->format().startsWith(QStringLiteral("runs 1\u20133 of 4 at once \u00b7 step 4/8")),
            qPrintable(bar->format()));
        for (int i = 0; i < 3; ++i) {
            Q_EMIT worker->runFinished(ids[i], run::RunStatus::Finished, QString());
        }
        Q_EMIT worker->runStarted(ids[3]);
        status = ws.window->statusBar()->currentMessage();
        QVERIFY2(status.contains(QStringLiteral("run 4 of 4")), qPrintable(status));
        QVERIFY2(bar->format().startsWith(QStringLiteral("run 4/4 ")), qPrintable(bar->format()));
    }

    void cancelMidRunLeavesACancelledRunWithRows() {
        test::Workspace ws;
        QVERIFY(ws.open());
        ws.window->editor()->setSpec(test::tinySpec(20000));
        TrainingWorker* worker = ws.window->training()->worker();
        train::TrainOptions options;
        options.flush_every = 2;  // rows reach the store (and progress) early
        options.flush_min_interval_ms = 0;
        worker->setTrainOptions(options);
        QSignalSpy planned(worker, &TrainingWorker::experimentPlanned);
        QSignalSpy progress(worker, &TrainingWorker::progress);
        QSignalSpy finishedRuns(worker, &TrainingWorker::runFinished);
        QSignalSpy finished(worker, &TrainingWorker::experimentFinished);

        QVERIFY(ws.window->runExperiment());
        QTRY_VERIFY_WITH_TIMEOUT(!progress.isEmpty() && progress.last()[1].toLongLong() >= 4,
                                 kTrainTimeoutMs);
        ws.window->cancelAction()->trigger();
        QTRY_VERIFY_WITH_TIMEOUT(!finished.isEmpty(), 60000);
        QCOMPARE(finished[0][1].toBool(), true);
        QCOMPARE(finishedRuns.size(), 1);
        QVERIFY(finishedRuns[0][1].value<run::RunStatus>() == run::RunStatus::Cancelled);

        const auto runIds = planned[0][1].value<QList<qint64>>();
        auto db = store::Database::open(ws.dbPath().toStdString(), store::Database::Mode::ReadOnly);
        const auto first = db->run(runIds[0]);
        QVERIFY(first.has_value());
        QVERIFY(first->status == run::RunStatus::Cancelled);
        QVERIFY(db->stepCount(runIds[0]) >= 4);
        QVERIFY(db->stepCount(runIds[0]) < 20000);
        for (int i = 1; i < runIds.size(); ++i) {
            QVERIFY(db->run(runIds[i])->status == run::RunStatus::Cancelled);
            QCOMPARE(db->stepCount(runIds[i]), int64_t(0));
        }
        QTRY_VERIFY(ws.window->runAction()->isEnabled());
        QVERIFY(!ws.window->cancelAction()->isEnabled());

        // The cancelled run's rows are on show.
        ws.window->session()->pollNow();
        QTRY_COMPARE(ws.window->cache()->runs(), runIds);
        ws.window->compare()->plots()->redrawNow();
        QCOMPARE(ws.window->compare()->plots()->lossPlot()->curves().first()->data()->size(),
                 static_cast<int>(db->stepCount(runIds[0])));
    }

    // Cancel asks: the running run alone (the queue goes on) or everything; a queued
    // run can be taken out without a question (it has no rows to lose).
    // The fast verdict from the window: on this machine (no CUDA) it says so in the
    // status bar, and the runs train as they would without it.
    void aFastVerdictSaysWhatItDoesInTheStatusBar() {
        test::Workspace ws;
        QVERIFY(ws.open());
        auto spec = test::tinySpec(8);
        spec.fast_verdict = true;
        ws.window->editor()->setSpec(spec);
        TrainingWorker* worker = ws.window->training()->worker();
        QSignalSpy notes(worker, &TrainingWorker::note);
        QSignalSpy finished(worker, &TrainingWorker::experimentFinished);
        QSignalSpy failed(worker, &TrainingWorker::failed);
        QSignalSpy shown(ws.window->statusBar(), &QStatusBar::messageChanged);
        QTRY_VERIFY(ws.window->runAction()->isEnabled());
        QVERIFY(ws.window->runExperiment());
        QTRY_VERIFY_WITH_TIMEOUT(!finished.isEmpty() || !failed.isEmpty(), kTrainTimeoutMs);
        QVERIFY2(failed.isEmpty(), failed.isEmpty() ? "" : qPrintable(failed[0][0].toString()));
        QVERIFY(!notes.isEmpty());  // then, where seeds fuse or cannot, a line saying so
        QVERIFY2(notes[0][0].toString().contains(QStringLiteral("no CUDA device")),
                 qPrintable(notes[0][0].toString()));
        const bool told = std::any_of(shown.begin(), shown.end(), [](const QList<QVariant>& m) {
            return m[0].toString().startsWith(QStringLiteral("fast verdict:"));
        });
        QVERIFY2(told, "the status bar never showed the note");
    }

    void oneRunCanBeCancelledOrRemovedAndTheQueueGoesOn() {
        test::Workspace ws;
        QVERIFY(ws.open());
        config::ExperimentSpec spec = test::tinySpec(20000);
        spec.arms.resize(1);
        spec.seeds = {1, 2, 3, 4};
        ws.window->editor()->setSpec(spec);
        TrainingWorker* worker = ws.window->training()->worker();
        train::TrainOptions options;
        options.flush_every = 2;
        options.flush_min_interval_ms = 0;
        worker->setTrainOptions(options);
        QStringList questions;
        QList<int> queuedAsked;
        MainWindow::CancelChoice answer = MainWindow::CancelChoice::Keep;
        ws.window->setCancelChooser([&](const QString& question, int queued) {
            questions << question;
            queuedAsked << queued;
            return answer;
        });
        QSignalSpy planned(worker, &TrainingWorker::experimentPlanned);
        QSignalSpy started(worker, &TrainingWorker::runStarted);
        QSignalSpy progress(worker, &TrainingWorker::progress);
        QSignalSpy finished(worker, &TrainingWorker::experimentFinished);

        QVERIFY(ws.window->runExperiment());
        QTRY_VERIFY_WITH_TIMEOUT(!progress.isEmpty() && progress.last()[2].toLongLong() > 0 &&
                                     progress.last()[1].toLongLong() >= 4,
                                 kTrainTimeoutMs);
        const auto ids = planned[0][1].value<QList<qint64>>();
        QCOMPARE(ids.size(), 4);
        QCOMPARE(ws.window->currentRun(), ids[0]);
        QCOMPARE(ws.window->queuedRuns(), (QList<qint64>{ids[1], ids[2], ids[3]}));
        QVERIFY(!ws.window->removeQueuedRun(ids[0]));  // training: not in the queue
        QVERIFY(ws.window->removeQueuedRun(ids[1]));
        QCOMPARE(ws.window->queuedRuns(), (QList<qint64>{ids[2], ids[3]}));

        // "Keep training" keeps it training.
        ws.window->cancelAction()->trigger();
        QCOMPARE(questions.size(), 1);
        QCOMPARE(queuedAsked.last(), 2);
        QVERIFY2(
            questions.last().contains("kept") && questions.last().contains(QString::number(ids[0])),
            qPrintable(questions.last()));
        QTest::qWait(300);
        QCOMPARE(ws.window->currentRun(), ids[0]);

        // This run alone: the removed run is passed over, the next queued one starts.
        answer = MainWindow::CancelChoice::ThisRun;
        ws.window->cancelAction()->trigger();
        QTRY_VERIFY_WITH_TIMEOUT(started.size() >= 2, 60000);
        QCOMPARE(started[1][0].toLongLong(), ids[2]);
        QVERIFY(finished.isEmpty());
        // Then everything: the last queued run never starts.
        QTRY_VERIFY_WITH_TIMEOUT(!progress.isEmpty() && progress.last()[0].toLongLong() == ids[2],
                                 60000);
        answer = MainWindow::CancelChoice::Everything;
        ws.window->cancelAction()->trigger();
        QCOMPARE(queuedAsked.last(), 1);
        QTRY_VERIFY_WITH_TIMEOUT(!finished.isEmpty(), 60000);
        QCOMPARE(finished[0][1].toBool(), true);
        QCOMPARE(started.size(), 2);  // the removed run and the last never started

        auto db = store::Database::open(ws.dbPath().toStdString(), store::Database::Mode::ReadOnly);
        QVERIFY(db->run(ids[0])->status == run::RunStatus::Cancelled);
        QVERIFY(db->stepCount(ids[0]) >= 4);  // its rows are kept
        QVERIFY(db->run(ids[1])->status == run::RunStatus::Cancelled);
        QCOMPARE(QString::fromStdString(db->run(ids[1])->error),
                 QStringLiteral("removed from the queue before it started"));
        QCOMPARE(db->stepCount(ids[1]), int64_t(0));
        QVERIFY(db->run(ids[2])->status == run::RunStatus::Cancelled);
        QVERIFY(db->run(ids[3])->status == run::RunStatus::Cancelled);
        QCOMPARE(db->stepCount(ids[3]), int64_t(0));
        QTRY_VERIFY(ws.window->runAction()->isEnabled());
        QCOMPARE(ws.window->currentRun(), qint64(0));
        QVERIFY(ws.window->queuedRuns().isEmpty());
    }

    void aFailingRunIsShownAndTheNextOneStarts() {
        test::Workspace ws;
        QVERIFY(ws.open());
        config::ExperimentSpec spec = test::tinySpec(8);
        spec.arms.resize(2);
        for (auto& arm : spec.arms) {
            arm.cuda_graph = true;  // passes the check before training, fails each CPU run
        }
        ws.window->editor()->setSpec(spec);
        TrainingWorker* worker = ws.window->training()->worker();
        QSignalSpy finishedRuns(worker, &TrainingWorker::runFinished);
        QSignalSpy finished(worker, &TrainingWorker::experimentFinished);
        QSignalSpy failed(worker, &TrainingWorker::failed);
        QSignalSpy errors(ws.window.get(), &MainWindow::errorShown);

        QVERIFY(ws.window->runExperiment());
        QTRY_VERIFY_WITH_TIMEOUT(!finished.isEmpty() || !failed.isEmpty(), kTrainTimeoutMs);
        QVERIFY2(failed.isEmpty(), failed.isEmpty() ? "" : qPrintable(failed[0][0].toString()));
        QCOMPARE(finishedRuns.size(), 2);  // the second run still ran (and failed the same way)
        for (const auto& args : finishedRuns) {
            QVERIFY(args[1].value<run::RunStatus>() == run::RunStatus::Failed);
            QVERIFY(args[2].toString().contains("cuda_graph needs a CUDA device"));
        }
        QTRY_COMPARE(errors.size(), 2);  // delivered to the window through its event loop
        QVERIFY(errors[0][0].toString().startsWith("Run #"));
        QVERIFY(errors[0][1].toString().contains("cuda_graph"));
    }

    // Data that cannot be read stops the experiment before anything is written, and
    // the editor marks the field that names it.
    void missingDataStopsBeforeAnythingIsWritten() {
        test::Workspace ws;
        QVERIFY(ws.open());
        config::ExperimentSpec spec = test::tinySpec(8);
        spec.data.dir = ws.dir.filePath("no-such-folder").toStdString();
        ws.window->editor()->setSpec(spec);
        TrainingWorker* worker = ws.window->training()->worker();
        QSignalSpy failed(worker, &TrainingWorker::failed);
        QSignalSpy planned(worker, &TrainingWorker::experimentPlanned);
        QVERIFY(ws.window->runExperiment());
        QTRY_VERIFY_WITH_TIMEOUT(!failed.isEmpty(), kTrainTimeoutMs);
        QVERIFY(failed[0][0].toString().contains("no-such-folder"));
        QVERIFY(planned.isEmpty());
        QVERIFY(store::Database::open(ws.dbPath().toStdString())->experiments().empty());
        QTRY_VERIFY(ws.window->editor()->fieldWidget("data.dir")->property("invalid").toBool());
        QTRY_VERIFY(ws.window->runAction()->isEnabled() == false);
    }

    // Run › Find max batch: every arm of the experiment searched on the worker, the
    // bars and the table read back from the store, ratios against fp32.
    void findMaxBatchShowsEachArmWithItsRatio() {
        test::Workspace ws;
        QVERIFY(ws.open());
        const config::ExperimentSpec spec = test::tinySpec();
        store::Database::open(ws.dbPath().toStdString())
            ->createExperiment("capacity", config::specToJsonText(spec));
        ws.window->session()->pollNow();
        ws.window->show();  // the tab reads the store while it is on show
        ws.window->showCapacity();
        CapacityView* view = ws.window->capacity();
        QCOMPARE(view->experiment(), qint64(1));
        QVERIFY(view->plot()->plottableCount() == 0);
        QVERIFY(view->findButton()->isEnabled());

        // A bad budget is named and starts nothing.
        view->budgetField()->setText("lots");
        view->findButton()->click();
        QVERIFY(!ws.window->training()->isRunning());
        QVERIFY(view->findChild<QLabel*>("capacityProgress")->text().contains("Budget \"lots\""));
        view->budgetField()->clear();

        view->setTrialSteps(1);
        view->upperBoundField()->setValue(32);  // from 8: fits 8, 16, 32, stops at the bound
        QSignalSpy finished(ws.window->training()->worker(), &TrainingWorker::batchSearchFinished);
        view->findButton()->click();
        QVERIFY(ws.window->training()->isRunning());
        QVERIFY(!view->findButton()->isEnabled());
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, kTrainTimeoutMs);
        QCOMPARE(finished[0][1].toBool(), false);
        QVERIFY2(finished[0][2].toString().isEmpty(), qPrintable(finished[0][2].toString()));

        // The view rereads the store when the window hears of the end (queued after the spy).
        auto allFinished = [view] {
            const auto& bars = view->chart().bars;
            return !bars.empty() && std::all_of(bars.begin(), bars.end(), [](const auto& b) {
                return b.status == "finished";
            });
        };
        QTRY_VERIFY(allFinished());
        QCOMPARE(view->chart().bars.size(), spec.arms.size());
        QCOMPARE(view->chart().baseline, std::string("fp32"));
        for (const auto& bar : view->chart().bars) {
            QVERIFY2(bar.max_batch == 32, bar.note.c_str());
            QCOMPARE(bar.status, std::string("finished"));
            QCOMPARE(bar.trials, 3);
            QCOMPARE(bar.ratio, 1.0);
        }
        QCOMPARE(view->plot()->plottableCount(), int(spec.arms.size()));
        QCOMPARE(view->table()->rowCount(), int(spec.arms.size()));
        QCOMPARE(view->table()->item(0, 3)->text(), QString("32"));
        const auto labels = view->plot()->findChildren<QCPItemText*>("capacityLabel");
        QCOMPARE(labels.size(), int(spec.arms.size()));
        QCOMPARE(labels[0]->text(), QString("32 \u00b7 1.00\u00d7"));
        QTRY_VERIFY(view->findButton()->isEnabled());
    }

    // Cancel during a search: the trials so far stay, the search is marked cancelled.
    void cancelDuringTheSearchKeepsItsTrials() {
        test::Workspace ws;
        QVERIFY(ws.open());
        store::Database::open(ws.dbPath().toStdString())
            ->createExperiment("capacity", config::specToJsonText(test::tinySpec()));
        ws.window->session()->pollNow();
        ws.window->show();  // the tab reads the store while it is on show
        ws.window->showCapacity();
        CapacityView* view = ws.window->capacity();
        view->setTrialSteps(1);
        TrainingWorker* worker = ws.window->training()->worker();
        QSignalSpy trials(worker, &TrainingWorker::batchTrial);
        QSignalSpy finished(worker, &TrainingWorker::batchSearchFinished);
        view->findButton()->click();
        QTRY_VERIFY_WITH_TIMEOUT(trials.count() >= 1, kTrainTimeoutMs);
        ws.window->cancelRun();
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, kTrainTimeoutMs);
        QCOMPARE(finished[0][1].toBool(), true);
        QTRY_VERIFY(!view->chart().bars.empty() &&
                    view->chart().bars.front().status == "cancelled");
        const auto& first = view->chart().bars.front();
        QVERIFY(first.trials >= 1);
        QCOMPARE(view->chart().bars.size(), size_t(1));  // later arms never started
    }

    void badDatabaseFailsWithAMessage() {
        // The worker opens its own connection; a folder is no database.
        TrainingController controller;
        QSignalSpy failed(controller.worker(), &TrainingWorker::failed);
        QTemporaryDir dir;
        QVERIFY(controller.start(test::tinySpec(), dir.path()));
        QTRY_VERIFY_WITH_TIMEOUT(!failed.isEmpty(), kUiPatienceMs);
        QVERIFY(failed[0][0].toString().contains("folder"));
        QTRY_VERIFY(!controller.isRunning());
    }
};

QTEST_MAIN(TrainingTest)
#include "test_ui_training.moc"
