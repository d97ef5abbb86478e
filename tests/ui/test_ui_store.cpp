// The window over the store: rows written by another connection or process
// appear live; a file that is not a workbench database is refused untouched;
// the history's delete moves to the trash.
#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFileSystemModel>
#include <QProcess>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTreeView>
#include <QtTest>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <utility>

#include <qcustomplot.h>

#include "../core/OtherProgram.h"
#include "UiTestSupport.h"
#include "core/analysis/ExperimentAnalysis.h"
#include "core/analysis/ExperimentData.h"
#include "core/analysis/Summary.h"
#include "core/config/SpecJson.h"
#include "core/store/Database.h"
#include "ui/MetaTypes.h"
#include "ui/data/RunDataCache.h"
#include "ui/data/StoreSession.h"
#include "ui/editor/ExperimentEditor.h"
#include "ui/plots/PlotPanel.h"
#include "ui/plots/PlotsView.h"
#include "ui/runs/CompareView.h"
#include "ui/runs/HistoryView.h"
#include "ui/runs/RunTreeModel.h"
#include "ui/runs/VerdictPanel.h"
#include "ui/training/TrainingController.h"
#include "ui/training/TrainingWorker.h"

using namespace ampbench;
using namespace ampbench::ui;

namespace {

std::vector<run::StepRecord> steps(int64_t from, int64_t to) {
    std::vector<run::StepRecord> out;
    for (int64_t s = from; s <= to; ++s) {
        run::StepRecord r;
        r.step = s;
        r.samples = s * 64;
        r.loss = 2.0 / static_cast<double>(s);
        r.step_ms = 10;
        r.wall_s = 0.01 * static_cast<double>(s);
        r.mem_allocated = r.mem_peak = 100 << 20;
        r.skipped = s == 3;
        out.push_back(r);
    }
    return out;
}

QByteArray readAll(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

int lossPoints(const MainWindow& w, int curve = 0) {
    const auto& curves = w.compare()->plots()->lossPlot()->curves();
    return curve < curves.size() ? curves[curve]->data()->size() : -1;
}

}  // namespace

class StoreTest : public QObject {
    Q_OBJECT
  private Q_SLOTS:
    void initTestCase() { registerMetaTypes(); }

    // A CPU run's memory is its own: the same spec reads the same peak per arm trained
    // in the window and by the CLI (the window's memory once added a quarter to it), and
    // the verdict gives the ratio without a caveat about the process.
    void theSameSpecsMemoryReadsAlikeInTheWindowAndFromTheCli() {
        test::Workspace ws;
        QVERIFY(ws.open());
        const config::ExperimentSpec spec = test::tinySpec(8);
        ws.window->editor()->setSpec(spec);
        QSignalSpy finished(ws.window->training()->worker(), &TrainingWorker::experimentFinished);
        QVERIFY(ws.window->runExperiment());
        QTRY_VERIFY_WITH_TIMEOUT(!finished.isEmpty(), 240000);
        const QString specFile = ws.dir.filePath("spec.json");
        QFile out(specFile);
        QVERIFY(out.open(QIODevice::WriteOnly));
        out.write(QByteArray::fromStdString(config::toJson(spec).dump()));
        out.close();
        const QString cliDb = ws.dir.filePath("cli.db");
        QProcess cli;
        cli.setProcessChannelMode(QProcess::MergedChannels);
        cli.start(AMPBENCH_CLI_PATH, {"--db", cliDb, "run", "--config", specFile, "-q"});
        QVERIFY(cli.waitForFinished(240000));
        QVERIFY2(cli.exitCode() == 0, cli.readAll().constData());
        auto peaks = [](const QString& path) {
            auto db = store::Database::open(path.toStdString(), store::Database::Mode::ReadOnly);
            const auto experiments = db->experiments();
            std::map<std::string, int64_t> out;
            for (const auto& a : analysis::summarizeArms(
                     analysis::summarizeExperimentRuns(*db, experiments.front().id))) {
                out[a.arm] = a.peak_mem;
            }
            return out;
        };
        const auto window = peaks(ws.dbPath());
        const auto headless = peaks(cliDb);
        QCOMPARE(window.size(), size_t(3));
        for (const auto& [arm, peak] : window) {
            const int64_t other = headless.at(arm);
            QVERIFY2(peak > 0 && std::abs(peak - other) <= other / 20,
                     qPrintable(QStringLiteral("%1: %2 MiB in the window, %3 MiB from the CLI")
                                    .arg(QString::fromStdString(arm))
                                    .arg(static_cast<double>(peak) / (1 << 20), 0, 'f', 2)
                                    .arg(static_cast<double>(other) / (1 << 20), 0, 'f', 2)));
        }
        auto db = store::Database::open(ws.dbPath().toStdString(), store::Database::Mode::ReadOnly);
        const auto data = analysis::loadExperiment(*db, db->experiments().front().id);
        QVERIFY(data);
        const auto judged = analysis::analyzeExperiment(*data);
        QCOMPARE(QString::fromStdString(judged.memory_label), QStringLiteral("peak in tensors"));
        for (const auto& v : judged.verdicts) {
            QVERIFY(!v.gains.process_memory);
        }
    }

    void rowsFromASecondConnectionAppearAfterThePoll() {
        test::Workspace ws;
        QVERIFY(ws.open());
        auto writer = store::Database::open(ws.dbPath().toStdString());
        const int64_t exp = writer->createExperiment("watched", "{}");
        const int64_t run = writer->createRun(exp, "amp", 0, 7, "{}", 100);
        writer->markRunning(run, "{}");
        writer->insertSteps(run, steps(1, 10));

        ws.window->session()->pollNow();
        QTRY_COMPARE(ws.window->cache()->runs(), QList<qint64>{run});
        QTRY_COMPARE(lossPoints(*ws.window), 10);
        QCOMPARE(ws.window->compare()->plots()->lossPlot()->curves().first()->name(),
                 QString("amp \u00b7 seed 7"));
        QVERIFY(ws.window->runModel()->runItem(run));

        writer->insertSteps(run, steps(11, 15));   // still training
        QTRY_COMPARE(lossPoints(*ws.window), 15);  // the session's own timer polls
        writer->finishRun(run, run::RunStatus::Finished, "");
        QTRY_VERIFY(ws.window->cache()->series(run)->row.status == run::RunStatus::Finished);
        QCOMPARE(ws.window->cache()->series(run)->steps.size(), size_t(15));
    }

    // Run ids restart in every database: after opening another one, the plots must
    // not keep a curve built from the first database's run with the same id.
    void anotherDatabaseWithTheSameRunIdsIsDrawnFromItsOwnRows() {
        test::Workspace ws;
        const QString other = ws.dir.filePath("other.db");
        for (const auto& [path, scale] : {std::pair{ws.dbPath(), 1.0}, std::pair{other, 3.0}}) {
            auto db = store::Database::open(path.toStdString());
            const int64_t exp = db->createExperiment("same ids", "{}");
            const int64_t run = db->createRun(exp, "fp32", 0, 1, "{}", 10);
            QCOMPARE(run, int64_t(1));
            db->markRunning(run, "{}");
            auto rows = steps(1, 10);
            for (auto& r : rows) {
                r.loss *= scale;
            }
            db->insertSteps(run, rows);
            db->finishRun(run, run::RunStatus::Finished, "");
        }
        auto firstLoss = [&] {
            const auto& curves = ws.window->compare()->plots()->lossPlot()->curves();
            return curves.isEmpty() || curves[0]->data()->isEmpty()
                       ? -1.0
                       : curves[0]->data()->at(0)->value;
        };
        QVERIFY(ws.open());
        ws.window->runModel()->setCheckedRuns({1});
        QTRY_COMPARE(lossPoints(*ws.window), 10);
        QTRY_VERIFY(std::abs(firstLoss() - 2.0) < 1e-9);
        QVERIFY(ws.window->openDatabase(other));
        ws.window->runModel()->setCheckedRuns({1});
        QTRY_COMPARE(lossPoints(*ws.window), 10);
        QTRY_VERIFY2(std::abs(firstLoss() - 6.0) < 1e-9, qPrintable(QString::number(firstLoss())));
    }

    // Export and Find max batch act on the experiment the user is looking at: the
    // ticked runs' (judged in the verdict panel) on the plots tab, History's
    // selection while History is on show.
    void theExperimentInViewIsTheTickedOne() {
        test::Workspace ws;
        QVERIFY(ws.open());
        auto writer = store::Database::open(ws.dbPath().toStdString());
        int64_t runs[2] = {0, 0};
        for (int e = 0; e < 2; ++e) {
            const int64_t exp = writer->createExperiment(e == 0 ? "first" : "second", "{}");
            runs[e] = writer->createRun(exp, "fp32", 0, 1, "{}", 10);
            writer->markRunning(runs[e], "{}");
            writer->insertSteps(runs[e], steps(1, 10));
            writer->finishRun(runs[e], run::RunStatus::Finished, "");
        }
        ws.window->session()->pollNow();
        QTreeView* tree = ws.window->history()->tree();
        QTRY_COMPARE(tree->model()->rowCount(), 2);
        for (int row = 0; row < tree->model()->rowCount(); ++row) {
            tree->setCurrentIndex(tree->model()->index(row, 0));
            if (ws.window->history()->selectedExperiment() == 1) {
                break;
            }
        }
        QCOMPARE(ws.window->history()->selectedExperiment(), qint64(1));
        ws.window->runModel()->setCheckedRuns({runs[1]});
        ws.window->tabs()->setCurrentWidget(ws.window->compare());
        QTRY_COMPARE(ws.window->compare()->verdictExperiment(), qint64(2));
        QCOMPARE(ws.window->experimentInView(), qint64(2));  // not History's selection
        ws.window->tabs()->setCurrentWidget(ws.window->history());
        QCOMPARE(ws.window->experimentInView(), qint64(1));

        // Runs of both ticked: Export asks which, and writes the one picked.
        ws.window->runModel()->setCheckedRuns({runs[0], runs[1]});
        ws.window->tabs()->setCurrentWidget(ws.window->compare());
        QTRY_COMPARE(ws.window->experimentsOnShow(), (QList<qint64>{1, 2}));
        QList<qint64> offered;
        ws.window->setExperimentChooser([&](const QList<qint64>& experiments) {
            offered = experiments;
            return experiments.last();
        });
        QCOMPARE(ws.window->experimentToExport(), qint64(2));
        QCOMPARE(offered, (QList<qint64>{1, 2}));
        ws.window->setExperimentChooser([](const QList<qint64>&) { return qint64(0); });
        QCOMPARE(ws.window->experimentToExport(), qint64(0));  // declined: nothing written
    }

    // File › Export report… writes the four files for the selected experiment; the
    // work runs on worker threads and ends with reportExported().
    void exportReportWritesTheFiles() {
        test::Workspace ws;
        QVERIFY(ws.open());
        auto writer = store::Database::open(ws.dbPath().toStdString());
        const int64_t exp = writer->createExperiment("exported", "{}");
        const int64_t run = writer->createRun(exp, "fp32", 0, 1, "{}", 10);
        writer->markRunning(run, "{}");
        writer->insertSteps(run, steps(1, 10));
        writer->finishRun(run, run::RunStatus::Finished, "");
        const QString stem = ws.dir.filePath("report");
        QSignalSpy done(ws.window.get(), &MainWindow::reportExported);
        QString message;
        QVERIFY2(ws.window->exportReportTo(exp, stem, &message), qPrintable(message));
        QVERIFY(ws.window->isExporting());
        QVERIFY(!ws.window->exportReportTo(exp, stem, &message));  // one at a time
        QVERIFY(message.contains("being written"));
        QTRY_COMPARE_WITH_TIMEOUT(done.count(), 1, kUiPatienceMs);
        QVERIFY2(done[0][0].toBool(), qPrintable(done[0][1].toString()));
        QVERIFY(!ws.window->isExporting());
        for (const char* ext : {".html", ".pdf", ".csv", ".json"}) {
            QFileInfo f(stem + ext);
            QVERIFY2(f.exists() && f.size() > 0, ext);
            QVERIFY(done[0][1].toString().contains(f.fileName()));
        }
        QVERIFY(readAll(stem + ".pdf").startsWith("%PDF"));
        QVERIFY(readAll(stem + ".html").contains("exported"));

        // An experiment that does not exist: the export starts and fails by name.
        QVERIFY(ws.window->exportReportTo(12345, stem, &message));
        QTRY_COMPARE_WITH_TIMEOUT(done.count(), 2, kUiPatienceMs);
        QVERIFY(!done[1][0].toBool());
        QVERIFY2(done[1][1].toString().contains("12345"), qPrintable(done[1][1].toString()));
        // A folder that does not exist: refused before any work, nothing signalled.
        QVERIFY(!ws.window->exportReportTo(exp, ws.dir.filePath("no/such/folder/r"), &message));
        QVERIFY2(message.contains("no/such/folder"), qPrintable(message));
        QCOMPARE(done.count(), 2);
    }

    // The verdict panel judges the ticked runs' experiment against the summary's
    // baseline, and says so when the ticked runs span experiments.
    void verdictPanelJudgesTheTickedExperiment() {
        test::Workspace ws;
        QVERIFY(ws.open());
        auto writer = store::Database::open(ws.dbPath().toStdString());
        const int64_t exp = writer->createExperiment("judged", "{}");
        QList<qint64> ids;
        for (const char* arm : {"fp32", "amp"}) {
            for (uint64_t seed : {1, 2}) {
                const int64_t run = writer->createRun(exp, arm, ids.size() / 2, seed, "{}", 60);
                writer->markRunning(run, "{}");
                auto rows = steps(1, 60);  // enough optimizer steps to be judged
                for (auto& r : rows) {
                    r.loss += 0.01 * static_cast<double>(seed);  // seed noise
                    r.skipped = false;
                }
                writer->insertSteps(run, rows);
                for (int64_t at : {30, 60}) {
                    run::EvalRecord e;
                    e.step = at;
                    e.samples = rows[static_cast<size_t>(at - 1)].samples;
                    e.val_loss = rows[static_cast<size_t>(at - 1)].loss;
                    e.val_accuracy = (at == 30 ? 0.7 : 0.8) + 0.005 * static_cast<double>(seed);
                    writer->insertEvals(run, {e});
                }
                writer->finishRun(run, run::RunStatus::Finished, "");
                ids << run;
            }
        }
        const int64_t other = writer->createExperiment("other", "{}");
        const int64_t lone = writer->createRun(other, "fp32", 0, 1, "{}", 10);
        writer->markRunning(lone, "{}");
        writer->insertSteps(lone, steps(1, 10));
        writer->finishRun(lone, run::RunStatus::Finished, "");
        ws.window->session()->pollNow();

        CompareView* compare = ws.window->compare();
        ws.window->runModel()->setCheckedRuns(ids);
        QTRY_COMPARE_WITH_TIMEOUT(compare->verdictExperiment(), qint64(exp), kUiPatienceMs);
        QString html = compare->verdictPanel()->plainText();
        QVERIFY2(html.contains("judged") && html.contains("amp") && html.contains("aligned"),
                 qPrintable(html));
        // The plots the verdict reads: amp's distance from fp32's band, and each arm's
        // validation accuracy as mean ± 2σ with the tolerance (two dashed lines).
        VerdictPanel* panel = compare->verdictPanel();
        QVERIFY(panel->tabs()->isTabEnabled(1));
        QVERIFY(panel->tabs()->isTabEnabled(2));
        QCOMPARE(panel->deviationPlot()->graphCount(), 3);   // the band's two edges, amp
        QCOMPARE(panel->validationPlot()->graphCount(), 8);  // 2 × (band edges, mean), 2 lines
        QVERIFY(panel->validationPlot()->graph(7)->pen().style() == Qt::DashLine);

        // Another baseline in the summary: the verdict follows it.
        auto* baseline = compare->findChild<QComboBox*>("baseline");
        QVERIFY(baseline);
        const int updates = compare->verdictUpdates();
        baseline->setCurrentText("amp");
        Q_EMIT baseline->activated(baseline->currentIndex());
        QTRY_VERIFY_WITH_TIMEOUT(compare->verdictUpdates() > updates, kUiPatienceMs);
        QTRY_VERIFY(compare->verdictPanel()->plainText().contains("each arm against amp"));

        ws.window->runModel()->setCheckedRuns(ids + QList<qint64>{lone});
        QTRY_COMPARE_WITH_TIMEOUT(compare->verdictExperiment(), qint64(0), kUiPatienceMs);
        QVERIFY(compare->verdictPanel()->plainText().contains("2 experiments"));
    }

    // The verdict waits for the runs it needs: an arm not trained yet is pending, one
    // whose runs were all cancelled is cancelled (neither an orange "inconclusive"), and
    // a baseline whose second seed still trains says so instead of "one seed, so the
    // noise band is unknown".
    void aVerdictWaitsForRunsStillToTrainAndNamesCancelledArms() {
        test::Workspace ws;
        QVERIFY(ws.open());
        auto writer = store::Database::open(ws.dbPath().toStdString());
        const int64_t exp = writer->createExperiment("waiting", "{}");
        QList<qint64> ids;
        auto trained = [&](const char* arm, int index, uint64_t seed, run::RunStatus end) {
            const int64_t run = writer->createRun(exp, arm, index, seed, "{}", 60);
            writer->markRunning(run, "{}");
            auto rows = steps(1, end == run::RunStatus::Finished ? 60 : 20);
            for (auto& r : rows) {
                r.skipped = false;
            }
            writer->insertSteps(run, rows);
            if (end != run::RunStatus::Running) {
                writer->finishRun(run, end, "");
            }
            ids << run;
        };
        trained("fp32", 0, 1, run::RunStatus::Finished);
        trained("fp32", 0, 2, run::RunStatus::Running);       // the baseline's second seed
        ids << writer->createRun(exp, "amp", 1, 1, "{}", 60)  // queued, never started
            << writer->createRun(exp, "amp", 1, 2, "{}", 60);
        trained("amp-accum4", 2, 1, run::RunStatus::Cancelled);
        trained("amp-accum4", 2, 2, run::RunStatus::Cancelled);
        ws.window->session()->pollNow();
        CompareView* compare = ws.window->compare();
        ws.window->runModel()->setCheckedRuns(ids);
        QTRY_COMPARE_WITH_TIMEOUT(compare->verdictExperiment(), qint64(exp), kUiPatienceMs);
        // As read: spaces of any width as one, no zero-width break marks.
        const QString text =
            compare->verdictPanel()->plainText().remove(QChar(0x200b)).simplified();
        QVERIFY2(!text.contains("inconclusive"), qPrintable(text));
        QVERIFY2(!text.contains("one finished seed") && !text.contains("ran with one seed"),
                 qPrintable(text));
        QVERIFY2(text.contains("amp pending") && text.contains("not trained yet"),
                 qPrintable(text));
        QVERIFY2(text.contains("amp-accum4 cancelled"), qPrintable(text));
        QVERIFY2(text.contains("still to train (seed 2)"), qPrintable(text));
        // Once the baseline's seed ends, the others are judged against its two seeds.
        writer->insertSteps(ids[1], steps(21, 60));
        writer->finishRun(ids[1], run::RunStatus::Finished, "");
        ws.window->session()->pollNow();
        QTRY_VERIFY_WITH_TIMEOUT(
            compare->verdictPanel()->plainText().contains("its 2 seeds give the noise band"),
            kUiPatienceMs);
    }

    // A running run's evaluation shows on the Validation tab as soon as it is
    // recorded, before any run has finished, drawn as running (dotted, named so) and
    // never as a finished arm's band; the next evaluation extends it.
    void validationTabShowsARunningRunsEvaluationAsSoonAsItIsRecorded() {
        test::Workspace ws;
        QVERIFY(ws.open());
        auto writer = store::Database::open(ws.dbPath().toStdString());
        const int64_t exp = writer->createExperiment("live", "{}");
        const int64_t run = writer->createRun(exp, "amp", 0, 3, "{}", 60);
        writer->markRunning(run, "{}");
        writer->insertSteps(run, steps(1, 5));
        ws.window->session()->pollNow();
        CompareView* compare = ws.window->compare();
        VerdictPanel* panel = compare->verdictPanel();
        ws.window->runModel()->setCheckedRuns({run});
        QTRY_COMPARE_WITH_TIMEOUT(compare->verdictExperiment(), qint64(exp), kUiPatienceMs);
        QVERIFY(!panel->tabs()->isTabEnabled(2));  // nothing evaluated yet

        run::EvalRecord e;
        e.step = 5;
        e.samples = 5 * 64;
        e.val_loss = 0.9;
        e.val_accuracy = 0.62;
        writer->insertEvals(run, {e});
        ws.window->session()->pollNow();
        QTRY_VERIFY_WITH_TIMEOUT(panel->tabs()->isTabEnabled(2), kUiPatienceMs);
        QCustomPlot* plot = panel->validationPlot();
        QCOMPARE(plot->graphCount(), 1);  // the running run alone: no band without a finished run
        QCPGraph* live = plot->graph(0);
        QCOMPARE(live->name(), QString("amp \u00b7 seed 3 (running)"));
        QVERIFY(live->pen().style() == Qt::DotLine);
        QCOMPARE(live->data()->size(), 1);
        QCOMPARE(live->data()->at(0)->key, 320.0);
        QCOMPARE(live->data()->at(0)->value, 62.0);  // accuracy in %
        QCOMPARE(plot->yAxis->label(), QString("validation accuracy (%)"));
        QVERIFY(plot->yAxis->range().contains(62.0));
        QVERIFY(plot->xAxis->range().contains(320.0));

        writer->insertSteps(run, steps(6, 10));
        e.step = 10;
        e.samples = 10 * 64;
        e.val_accuracy = 0.7;
        writer->insertEvals(run, {e});
        ws.window->session()->pollNow();
        QTRY_COMPARE_WITH_TIMEOUT(panel->validationPlot()->graph(0)->data()->size(), 2,
                                  kUiPatienceMs);
        QCOMPARE(panel->validationPlot()->graph(0)->data()->at(1)->value, 70.0);
    }

    // Beside finished runs, a running run is its own dotted curve, after the finished
    // arm's band and tolerance, and leaves the band as the finished runs made it.
    void aRunningRunsEvaluationsAreDrawnApartFromTheFinishedBand() {
        test::Workspace ws;
        QVERIFY(ws.open());
        auto writer = store::Database::open(ws.dbPath().toStdString());
        const int64_t exp = writer->createExperiment("mixed", "{}");
        QList<qint64> ids;
        auto evalAt = [](int64_t step, double accuracy) {
            run::EvalRecord e;
            e.step = step;
            e.samples = step * 64;
            e.val_loss = 1.0;
            e.val_accuracy = accuracy;
            return e;
        };
        for (uint64_t seed : {1, 2}) {
            const int64_t r = writer->createRun(exp, "fp32", 0, seed, "{}", 20);
            writer->markRunning(r, "{}");
            writer->insertSteps(r, steps(1, 20));
            writer->insertEvals(r, {evalAt(10, 0.70), evalAt(20, 0.80)});
            writer->finishRun(r, run::RunStatus::Finished, "");
            ids << r;
        }
        const int64_t running = writer->createRun(exp, "fp32", 0, 3, "{}", 20);
        writer->markRunning(running, "{}");
        writer->insertSteps(running, steps(1, 10));
        writer->insertEvals(running, {evalAt(10, 0.40)});
        ids << running;
        ws.window->session()->pollNow();
        CompareView* compare = ws.window->compare();
        ws.window->runModel()->setCheckedRuns(ids);
        QTRY_COMPARE_WITH_TIMEOUT(compare->verdictExperiment(), qint64(exp), kUiPatienceMs);
        QCustomPlot* plot = compare->verdictPanel()->validationPlot();
        QVERIFY(compare->verdictPanel()->tabs()->isTabEnabled(2));
        QCOMPARE(plot->graphCount(), 4);  // band edges, mean, then the running run
        QCOMPARE(plot->graph(2)->name(), QString("fp32 \u00b1 2\u03c3 (2 seeds)"));
        QCOMPARE(plot->graph(2)->data()->at(0)->value, 70.0);  // 0.40 is not in the mean
        QCOMPARE(plot->graph(3)->name(), QString("fp32 \u00b7 seed 3 (running)"));
        QVERIFY(plot->graph(3)->pen().style() == Qt::DotLine);
        QCOMPARE(plot->graph(3)->data()->at(0)->value, 40.0);
    }

    void runsOfAnotherProcessAppearLive() {
        test::Workspace ws;
        QVERIFY(ws.open());
        QProcess cli;
        cli.setProcessChannelMode(QProcess::MergedChannels);
        cli.start(AMPBENCH_CLI_PATH, {"--db", ws.dbPath(), "run", "--preset", "smoke", "--steps",
                                      "8", "--seeds", "1", "--warmup", "1", "--eval-batches", "1",
                                      "--device", "cpu", "--threads", "1", "-q"});
        QVERIFY(cli.waitForStarted());
        // The experiment shows up while (or soon after) the other process trains it.
        QTRY_VERIFY_WITH_TIMEOUT(ws.window->cache()->runs().size() == 3, 120000);
        QVERIFY(cli.waitForFinished(240000));
        QCOMPARE(cli.exitCode(), 0);
        QTRY_COMPARE_WITH_TIMEOUT(lossPoints(*ws.window, 2), 2, kUiPatienceMs);
        QCOMPARE(lossPoints(*ws.window, 0), 8);
        QCOMPARE(lossPoints(*ws.window, 1), 8);
    }

    // A run another program starts while the window shows other runs is announced, not
    // switched to: the plots and the verdict stay on what is read until the status bar's
    // button is clicked.
    void runsOfAnotherProcessAreAnnouncedNotForcedIntoView() {
        test::Workspace ws;
        QVERIFY(ws.open());
        const QString path = ws.dbPath();
        RunTreeModel* model = ws.window->runModel();
        QCOMPARE(test_processes::runOtherProgram("write", path.toStdString(), "first"), 0);
        // Nothing plotted yet: the first one shows, as a database opened on it would.
        QTRY_COMPARE_WITH_TIMEOUT(model->checkedRuns().size(), 1, kUiPatienceMs);
        const QList<qint64> reading = model->checkedRuns();
        QVERIFY(ws.window->announcedRuns().isEmpty());
        QVERIFY(!ws.window->newRunsButton()->isVisible());

        QCOMPARE(test_processes::runOtherProgram("write", path.toStdString(), "second"), 0);
        QTRY_COMPARE_WITH_TIMEOUT(ws.window->announcedRuns().size(), 1, kUiPatienceMs);
        const qint64 fresh = ws.window->announcedRuns().first();
        QVERIFY(!reading.contains(fresh));
        QCOMPARE(model->checkedRuns(), reading);  // still what the user reads
        QVERIFY(ws.window->newRunsButton()->isVisibleTo(ws.window.get()));
        QVERIFY2(ws.window->newRunsButton()->text().contains(QStringLiteral("1 new run")),
                 qPrintable(ws.window->newRunsButton()->text()));
        QVERIFY(ws.window->newRunsButton()->toolTip().contains(QStringLiteral("second")));

        ws.window->newRunsButton()->click();
        QCOMPARE(model->checkedRuns(), QList<qint64>{fresh});
        QVERIFY(ws.window->announcedRuns().isEmpty());
        QVERIFY(!ws.window->newRunsButton()->isVisibleTo(ws.window.get()));
    }

    // The window keeps its connection open while other programs write and exit, its
    // poll and File > Open make more connections beside it, and it writes (a rename):
    // every program sees every row, and the file is intact after the window closes.
    void theWindowAndOtherProgramsOnOneDatabaseKeepItIntact() {
        auto ws = std::make_unique<test::Workspace>();
        QVERIFY(ws->open());
        const QString path = ws->dbPath();
        QAbstractItemModel* tree = ws->window->history()->tree()->model();
        for (int i = 0; i < 3; ++i) {
            const QString name = QString("cli-%1").arg(i);
            QCOMPARE(
                test_processes::runOtherProgram("write", path.toStdString(), name.toStdString()),
                0);
            QTRY_COMPARE_WITH_TIMEOUT(tree->rowCount(), i + 1, kUiPatienceMs);
            QVERIFY(ws->window->history()->renameExperiment(1, QString("renamed-%1").arg(i)));
            QCOMPARE(test_processes::runOtherProgram("read", path.toStdString(),
                                                     QString("renamed-%1").arg(i).toStdString()),
                     0);
            QVERIFY(ws->window->openDatabase(path));  // File > Open of the same file
        }
        ws->window.reset();  // quitting the workbench
        {
            auto db = store::Database::open(path.toStdString(), store::Database::Mode::ReadOnly);
            db->requireIntact();
            QCOMPARE(int(db->experiments().size()), 3);
            QCOMPARE(QString::fromStdString(db->experiment(1)->name), QString("renamed-2"));
            for (const auto& r : db->runs()) {
                QCOMPARE(db->stepCount(r.id), int64_t(8));
            }
        }
    }

    void garbageFileIsRefusedAndLeftUntouched() {
        test::Workspace ws;
        QVERIFY(ws.open());
        const QString garbage = ws.dir.filePath("notes.db");
        {
            QFile f(garbage);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(QByteArray("these are my notes, not a database\n").repeated(200));
        }
        const QByteArray before = readAll(garbage);
        QSignalSpy errors(ws.window.get(), &MainWindow::errorShown);

        QVERIFY(!ws.window->openDatabase(garbage));
        QCOMPARE(errors.size(), 1);
        QCOMPARE(errors[0][0].toString(), QString("Cannot open database"));
        QVERIFY(errors[0][1].toString().contains("notes.db"));
        QCOMPARE(readAll(garbage), before);
        QVERIFY(!QFile::exists(garbage + "-wal"));
        QCOMPARE(ws.window->session()->path(), QFileInfo(ws.dbPath()).absoluteFilePath());
        QVERIFY(!ws.settings->recentDatabases().contains(QFileInfo(garbage).absoluteFilePath()));
    }

    // File › Open database… lists the workbench's own .ampbench files beside .db ones
    // (the README says they open; the dialog hid them).
    void theOpenDialogListsAmpbenchFilesBesideDatabases() {
        test::Workspace ws;
        QVERIFY(ws.open());
        for (const char* name : {"runs-copy.db", "server.ampbench", "notes.txt"}) {
            QFile f(ws.dir.filePath(QString::fromLatin1(name)));
            QVERIFY(f.open(QIODevice::WriteOnly));
        }
        for (bool create : {false, true}) {
            std::unique_ptr<QFileDialog> dialog(ws.window->databaseDialog(create));
            dialog->setOption(QFileDialog::DontUseNativeDialog);
            dialog->setDirectory(ws.dir.path());
            auto* files = dialog->findChild<QFileSystemModel*>();
            QVERIFY(files);
            const QStringList listed =
                QDir(ws.dir.path()).entryList(files->nameFilters(), QDir::Files);
            QVERIFY2(listed.contains("server.ampbench") && listed.contains("runs-copy.db") &&
                         !listed.contains("notes.txt"),
                     qPrintable(listed.join(", ")));
        }
    }

    void openingRemembersRecentDatabases() {
        test::Workspace ws;
        for (int i = 0; i < 10; ++i) {
            QVERIFY(ws.window->openDatabase(ws.dir.filePath(QString("db%1.db").arg(i))));
        }
        const QStringList recent = ws.settings->recentDatabases();
        QCOMPARE(recent.size(), Settings::kMaxRecentDatabases);
        QCOMPARE(recent.first(), ws.dir.filePath("db9.db"));
        QCOMPARE(ws.settings->lastDatabase(), ws.dir.filePath("db9.db"));
        QVERIFY(ws.window->openDatabase(ws.dir.filePath("db5.db")));
        QCOMPARE(ws.settings->recentDatabases().first(), ws.dir.filePath("db5.db"));
        QCOMPARE(ws.settings->recentDatabases().count(ws.dir.filePath("db5.db")), 1);
    }

    void historyFiltersAndDeletesToTheTrash() {
        test::Workspace ws;
        QVERIFY(ws.open());
        auto writer = store::Database::open(ws.dbPath().toStdString());
        const int64_t keep = writer->createExperiment("keep-me", "{}");
        writer->createRun(keep, "fp32", 0, 1, "{}", 10);
        const int64_t drop = writer->createExperiment("drop-me", "{}");
        const int64_t dropRun = writer->createRun(drop, "amp", 0, 1, "{}", 10);
        writer->insertSteps(dropRun, steps(1, 5));
        writer->finishRun(dropRun, run::RunStatus::Finished, "");  // queued runs stay
        ws.window->session()->pollNow();

        HistoryView* history = ws.window->history();
        QTreeView* tree = history->tree();
        QCOMPARE(tree->model()->rowCount(), 2);
        history->setNameFilter("drop");
        QCOMPARE(tree->model()->rowCount(), 1);
        tree->setCurrentIndex(tree->model()->index(0, 0));

        bool asked = false;
        history->setConfirm([&](const QString&, const QString&) {
            asked = true;
            return false;
        });
        QVERIFY(history->deleteSelected());  // to the trash: undoable, so nothing is asked
        QVERIFY(!asked);
        QVERIFY(!writer->experiment(drop)->trashed_at.empty());
        QCOMPARE(writer->stepCount(dropRun), int64_t(5));
        history->setNameFilter("");
        QCOMPARE(tree->model()->rowCount(), 1);
        QVERIFY(writer->experiment(keep).has_value());

        history->setStatusFilter("running");
        QCOMPARE(tree->model()->rowCount(), 0);
        history->setStatusFilter("queued");
        QCOMPARE(tree->model()->rowCount(), 1);
    }
};

QTEST_MAIN(StoreTest)
#include "test_ui_store.moc"
