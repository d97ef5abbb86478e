// The training worker behind the window: a tiny experiment end to end into the
// plots, and Cancel in the middle of a run.
#include <signal.h>
#include <QAction>
#include <QFile>
#include <QFileInfo>
#include <QLabel>
#include <QLineEdit>
#include <QProcess>
#include <QProgressBar>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStatusBar>
#include <QTableWidget>
#include <QtTest>
#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "UiTestSupport.h"
#include "core/config/SpecJson.h"
#include "core/store/Database.h"
#include "ui/capacity/CapacityView.h"
#include "ui/data/RunDataCache.h"
#include "ui/data/StoreSession.h"
#include "ui/editor/ExperimentEditor.h"
#include "ui/plots/PlotPanel.h"
#include "ui/plots/PlotsView.h"
#include "ui/runs/CompareView.h"
#include "ui/runs/SummaryTableModel.h"
#include "ui/runs/VerdictPanel.h"
#include "ui/training/ThreadPriority.h"
#include "ui/training/TrainingController.h"
#include "ui/training/TrainingWorker.h"

using namespace ampbench;
using namespace ampbench::ui;

namespace {
constexpr int kTrainTimeoutMs = 240000;

/// Whether Debian's /usr/bin/python3 imports `module` (ampbench from this checkout).
bool pythonImports(const char* module) {
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("PYTHONPATH"), QStringLiteral(AMPBENCH_PYTHON_DIR));
    p.setProcessEnvironment(env);
    p.start(QStringLiteral("/usr/bin/python3"),
            {QStringLiteral("-c"), QStringLiteral("import ") + module});
    return p.waitForFinished(60000) && p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0;
}

/// Every problem the editor lists, a line each.
QString errorText(const ExperimentEditor& editor) {
    QStringList lines;
    for (const auto& e : editor.errors()) {
        lines << QString::fromStdString(e.toString());
    }
    return lines.join('\n');
}

/// The user's training script as the model, run by /usr/bin/python3 on the CPU: fp32
/// and bf16 arms (or fp32 alone), one run per arm and seed.
config::ExperimentSpec scriptSpec(const QString& script, const QString& args,
                                  std::vector<uint64_t> seeds, int64_t steps, int arms = 2) {
    config::ExperimentSpec s = test::tinySpec(steps);
    s.name = "script";
    s.model.name = "script";
    s.model.file = script.toStdString();
    s.model.python = "/usr/bin/python3";
    s.model.args = args.toStdString();
    s.micro_batch = 32;
    s.eval_interval = 0;
    s.seeds = std::move(seeds);
    s.arms.resize(1);
    s.arms[0] = config::ArmSpec{};
    s.arms[0].name = "fp32";
    s.arms[0].precision = config::Precision::Fp32;
    if (arms > 1) {
        config::ArmSpec bf16;
        bf16.name = "bf16";
        bf16.precision = config::Precision::AmpBf16;
        s.arms.push_back(bf16);
    }
    return s;
}

/// An experiment of `runs` fp32 runs in `ws`'s database, planned as the training
/// worker plans one (its signals are then sent by hand), and the window's progress bar.
/// What the worker says while runs train side by side, and a run's most steps so far.
struct WorkerSignals {
    explicit WorkerSignals(TrainingWorker* w)
        : planned(w, &TrainingWorker::experimentPlanned),
          started(w, &TrainingWorker::runStarted),
          progress(w, &TrainingWorker::progress),
          runEnded(w, &TrainingWorker::runFinished),
          finished(w, &TrainingWorker::experimentFinished),
          failed(w, &TrainingWorker::failed) {}
    QSignalSpy planned, started, progress, runEnded, finished, failed;
    qint64 stepsOf(qint64 id) const {
        qint64 most = 0;
        for (const auto& p : progress) {
            if (p[0].toLongLong() == id) {
                most = std::max(most, p[1].toLongLong());
            }
        }
        return most;
    }
};

struct PlannedByHand {
    int64_t experiment = 0;
    QList<qint64> ids;
    TrainingWorker* worker = nullptr;
    QProgressBar* bar = nullptr;
};

PlannedByHand planByHand(test::Workspace& ws, const std::string& name, int runs) {
    PlannedByHand p;
    auto db = store::Database::open(ws.dbPath().toStdString());
    p.experiment = db->createExperiment(name, "{}");
    for (int seed = 1; seed <= runs; ++seed) {
        p.ids.append(db->createRun(p.experiment, "fp32", 0, seed, "{}", 8));
    }
    p.bar = ws.window->findChild<QProgressBar*>("trainingProgress");
    p.worker = ws.window->training()->worker();
    Q_EMIT p.worker->experimentPlanned(p.experiment, p.ids);
    return p;
}

}  // namespace

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
        const QString pidFile = ws.dir.filePath(QStringLiteral("pid"));
        ws.window->editor()->setSpec(
            scriptSpec(QStringLiteral(AMPBENCH_TEST_SCRIPTS "/slow_steps.py"), "'" + pidFile + "'",
                       {1, 2, 3}, 1200, 1));
        MainWindow::CancelChoice answer = MainWindow::CancelChoice::ThisRun;
        ws.window->setCancelChooser([&](const QString&, int) { return answer; });
        TrainingWorker* worker = ws.window->training()->worker();
        QSignalSpy planned(worker, &TrainingWorker::experimentPlanned);
        QSignalSpy started(worker, &TrainingWorker::runStarted);
        QSignalSpy progress(worker, &TrainingWorker::progress);
        QSignalSpy finished(worker, &TrainingWorker::experimentFinished);
        QSignalSpy failed(worker, &TrainingWorker::failed);

        QVERIFY(ws.window->runExperiment());
        QTRY_VERIFY_WITH_TIMEOUT(
            !progress.isEmpty() && progress.last()[1].toLongLong() >= 3 || !failed.isEmpty(),
            kTrainTimeoutMs);
        QVERIFY2(failed.isEmpty(), failed.isEmpty() ? "" : qPrintable(failed[0][0].toString()));
        const auto ids = planned[0][1].value<QList<qint64>>();
        QCOMPARE(ids.size(), 3);
        // This run alone: its script is stopped, the next run's starts.
        ws.window->cancelAction()->trigger();
        QTRY_VERIFY_WITH_TIMEOUT(started.size() >= 2, 60000);
        QCOMPARE(started[1][0].toLongLong(), ids[1]);
        QVERIFY(finished.isEmpty());
        QTRY_VERIFY_WITH_TIMEOUT(!progress.isEmpty() && progress.last()[0].toLongLong() == ids[1] &&
                                     progress.last()[1].toLongLong() >= 3,
                                 60000);
        // Then everything: the last run never starts.
        answer = MainWindow::CancelChoice::Everything;
        ws.window->cancelAction()->trigger();
        QTRY_VERIFY_WITH_TIMEOUT(!finished.isEmpty(), 60000);
        QCOMPARE(finished[0][1].toBool(), true);
        QCOMPARE(started.size(), 2);

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
        QFile file(pidFile);
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
        const QString pidFile = ws.dir.filePath(QStringLiteral("pid"));
        config::ExperimentSpec spec =
            scriptSpec(QStringLiteral(AMPBENCH_TEST_SCRIPTS "/slow_steps.py"), "'" + pidFile + "'",
                       {1, 2}, 1200, 1);
        spec.runs_per_gpu = 2;
        ws.window->editor()->setSpec(spec);
        MainWindow::CancelChoice answer = MainWindow::CancelChoice::ThisRun;
        ws.window->setCancelChooser([&](const QString&, int) { return answer; });
        WorkerSignals sig(ws.window->training()->worker());
        QVERIFY(ws.window->runExperiment());
        QTRY_VERIFY_WITH_TIMEOUT(sig.started.size() == 2 || !sig.failed.isEmpty(), kTrainTimeoutMs);
        QVERIFY2(sig.failed.isEmpty(),
                 sig.failed.isEmpty() ? "" : qPrintable(sig.failed[0][0].toString()));
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
        config::ExperimentSpec spec = scriptSpec(
            QStringLiteral(AMPBENCH_TEST_SCRIPTS "/slow_steps.py"),
            "'" + ws.dir.filePath(QStringLiteral("pid")) + "'", {1, 2, 3, 4, 5, 6}, 1200, 1);
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
        QVERIFY2(sig.failed.isEmpty(),
                 sig.failed.isEmpty() ? "" : qPrintable(sig.failed[0][0].toString()));
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
