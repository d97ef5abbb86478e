// The Max batch tab's progress: sizes in MiB/GiB, the search's time left; its chart
// before a search, and a long experiment name in a narrow window.
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStatusBar>
#include <QTableWidget>
#include <QtTest>
#include <cmath>

#include "UiTestSupport.h"
#include "core/config/SpecJson.h"
#include "core/store/BatchSearchStore.h"
#include "core/store/Database.h"
#include "ui/ElidingComboBox.h"
#include "ui/capacity/CapacityView.h"
#include "ui/data/StoreSession.h"
#include "ui/plots/PlotPanel.h"
#include "ui/training/TrainingController.h"
#include "ui/training/TrainingWorker.h"

using namespace ampbench;
using namespace ampbench::ui;

namespace {
constexpr int kTrainTimeoutMs = 120000;
/// A size written as a raw count of bytes (seven digits or more).
const QRegularExpression kRawBytes(QStringLiteral("\\d{7,}"));
}  // namespace

class CapacityTest : public QObject {
    Q_OBJECT
  private Q_SLOTS:
    void trialLineHasSizesAndTimeLeft() {
        test::Workspace ws;
        CapacityView* view = ws.window->capacity();
        QString line = view->showTrial(2, 3, "amp-accum4", 1, "over_budget", 1109413888, NAN);
        QVERIFY2(line.contains("1.03 GiB"), qPrintable(line));
        QVERIFY2(line.contains("arm 3 of 3"), qPrintable(line));
        QVERIFY2(line.endsWith(QStringLiteral("\u2014")), qPrintable(line));  // not known yet
        QVERIFY2(!line.contains(kRawBytes), qPrintable(line));
        line = view->showTrial(0, 3, "fp32", 512, "fits", 700 << 20, 41.0);
        QVERIFY2(line.contains("700 MiB") && line.endsWith("about 40 s left"), qPrintable(line));
        QCOMPARE(view->progressText(), line);
    }

    // While an arm's search runs its bar says what fit so far, not "none fit".
    void aRunningSearchShowsWhatFitSoFar() {
        test::Workspace ws;
        QVERIFY(ws.open());
        auto db = store::Database::open(ws.dbPath().toStdString());
        const int64_t e =
            db->createExperiment("capacity", config::specToJsonText(test::tinySpec()));
        store::BatchSearchRow row;
        row.experiment_id = e;
        row.arm = "fp32";
        row.precision = "fp32";
        row.device = "cpu";
        row.status = "running";
        store::BatchSearchStore(*db).create(row);
        ws.window->session()->pollNow();
        CapacityView* view = ws.window->capacity();
        view->setExperiment(e);
        view->beginSearch();
        view->refresh();
        QTRY_COMPARE(int(view->chart().bars.size()), 1);
        if (view->chart().bars[0].status != "running") {
            QSKIP("a search row of this process reads as another's here");
        }
        QCOMPARE(view->barLabel(0), QStringLiteral("searching"));
        view->showTrial(0, 1, "fp32", 256, "fits", 300 << 20, 20.0);
        view->showTrial(0, 1, "fp32", 512, "fits", 500 << 20, 10.0);
        view->showTrial(0, 1, "fp32", 1024, "over_budget", 900 << 20, 5.0);
        QCOMPARE(view->fitSoFar("fp32"), qint64(512));
        QCOMPARE(view->barLabel(0), QStringLiteral("512 fit so far, searching"));
        QVERIFY(!view->barLabel(0).contains("none fit"));
        view->beginSearch();  // the next search starts afresh
        QCOMPARE(view->fitSoFar("fp32"), qint64(0));
    }

    // While a search runs, an arm it has not reached says it waits, not how an
    // earlier search of it ended.
    void anArmNotReachedYetWaits() {
        test::Workspace ws;
        QVERIFY(ws.open());
        auto db = store::Database::open(ws.dbPath().toStdString());
        const int64_t e =
            db->createExperiment("capacity", config::specToJsonText(test::tinySpec()));
        store::BatchSearchStore searches(*db);
        store::BatchSearchRow row;
        row.experiment_id = e;
        row.arm = "amp";
        row.precision = "bf16";
        row.device = "cpu";
        const int64_t id = searches.create(row);
        row.status = "failed";
        row.note = "an earlier search";
        searches.finish(id, row);
        ws.window->session()->pollNow();
        CapacityView* view = ws.window->capacity();
        view->setExperiment(e);
        QTRY_COMPARE(int(view->chart().bars.size()), 1);
        QCOMPARE(view->barLabel(0), QStringLiteral("none fit (failed)"));
        view->setBusy(true);
        view->beginSearch(e);
        QCOMPARE(view->barLabel(0), QStringLiteral("waiting"));
        view->showTrial(0, 1, "amp", 8, "fits", 10 << 20, NAN);  // the search reached it
        QCOMPARE(view->barLabel(0), QStringLiteral("none fit (failed)"));
        view->setBusy(false);
        view->beginSearch(e);
        QCOMPARE(view->barLabel(0), QStringLiteral("none fit (failed)"));  // nothing runs
    }

    // A search on the worker: every trial's line reaches the tab with a time left
    // once two trials are timed, and a budget no batch fits is named in MiB.
    void searchReportsTimeLeftAndReadableSizes() {
        test::Workspace ws;
        QVERIFY(ws.open());
        const config::ExperimentSpec spec = test::tinySpec();
        store::Database::open(ws.dbPath().toStdString())
            ->createExperiment("capacity", config::specToJsonText(spec));
        ws.window->session()->pollNow();
        ws.window->show();
        ws.window->showCapacity();
        CapacityView* view = ws.window->capacity();
        view->setTrialSteps(1);
        view->upperBoundField()->setValue(32);  // 8, 16, 32 per arm
        TrainingWorker* worker = ws.window->training()->worker();
        QSignalSpy trials(worker, &TrainingWorker::batchTrial);
        QSignalSpy finished(worker, &TrainingWorker::batchSearchFinished);
        view->findButton()->click();
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, kTrainTimeoutMs);
        QVERIFY2(finished[0][2].toString().isEmpty(), qPrintable(finished[0][2].toString()));
        QCOMPARE(trials.count(), 3 * int(spec.arms.size()));
        QVERIFY(std::isnan(trials[0][6].toDouble()));  // one trial: not known
        int known = 0;
        for (int i = 0; i < trials.count(); ++i) {
            QCOMPARE(trials[i][5].toInt(), int(spec.arms.size()));
            known += std::isfinite(trials[i][6].toDouble()) ? 1 : 0;
        }
        // At least each arm's last trial knows (the first arm's doubling may not).
        QVERIFY2(known >= int(spec.arms.size()), qPrintable(QString::number(known)));
        QCOMPARE(trials.last()[6].toDouble(), 0.0);  // the last trial of the last arm

        // A budget below what one sample adds: one error for every arm, named once.
        view->budgetField()->setText("4K");
        finished.clear();
        QSignalSpy errors(ws.window.get(), &MainWindow::errorShown);
        QTRY_VERIFY(view->findButton()->isEnabled());  // once the window heard of the end
        view->findButton()->click();
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, kTrainTimeoutMs);
        const QString error = finished[0][2].toString();
        QVERIFY2(error.contains("4.00 KiB") && !error.contains(kRawBytes), qPrintable(error));
        QVERIFY2(spec.arms.size() > 1 && error.count("below what one sample needs") == 1 &&
                     !error.contains('\n'),
                 qPrintable(error));
        QVERIFY2(error.contains("in every arm"), qPrintable(error));
        // The banner wraps: a long error does not widen the window past a laptop screen.
        QVERIFY(ws.window->minimumSizeHint().width() <= 1024);
        // Said once where it is read: the tab's banner (and each arm's note), no
        // message box over the tab on show, a pointer on the status bar.
        QTRY_VERIFY(view->progressText().contains("4.00 KiB"));
        QCOMPARE(errors.count(), 0);
        QVERIFY(!ws.window->statusBar()->currentMessage().contains("4.00 KiB"));
        QVERIFY(ws.window->statusBar()->currentMessage().contains("Max batch"));
        QTRY_VERIFY(view->table()->rowCount() == int(spec.arms.size()));
        for (int row = 0; row < view->table()->rowCount(); ++row) {
            const QString note = view->table()->item(row, view->table()->columnCount() - 1)->text();
            QVERIFY2(!note.contains(kRawBytes), qPrintable(note));
        }
    }

    // Before a search the chart says why it is empty, in words a user reads ("on auto"
    // named no device), and its axes show no numbers (they read 0 to 1 "max
    // micro-batch"); a search's bars bring numbers, whole ones only. In a 1024-pixel
    // window a long experiment name ends in an ellipsis, not cut mid-letter.
    void theChartBeforeASearchAndALongNameReadWell() {
        test::Workspace ws;
        QVERIFY(ws.open());
        auto db = store::Database::open(ws.dbPath().toStdString());
        config::ExperimentSpec spec = test::tinySpec();
        spec.device = config::DeviceKind::Auto;
        const int64_t e = db->createExperiment("fashion-mnist with a name longer than the box",
                                               config::specToJsonText(spec));
        ws.window->session()->pollNow();
        ws.window->resize(1024, 700);
        ws.window->show();
        ws.window->showCapacity();
        QVERIFY(QTest::qWaitForWindowExposed(ws.window.get()));
        CapacityView* view = ws.window->capacity();
        view->setExperiment(e);
        PlotPanel* plot = view->plot();
        plot->replot();
        QVERIFY(!plot->showsAxisValues());
        QVERIFY2(plot->message().contains("GPU if there is one"), qPrintable(plot->message()));
        QVERIFY2(!plot->message().contains("on auto"), qPrintable(plot->message()));

        auto* box = view->findChild<ElidingComboBox*>("capacityExperiment");
        QVERIFY(box);
        const QString shown = box->shownText();
        QVERIFY2(shown.endsWith(QChar(0x2026)), qPrintable(shown));
        QVERIFY(box->fontMetrics().horizontalAdvance(shown) < box->width());

        store::BatchSearchStore searches(*db);
        store::BatchSearchRow row;
        row.experiment_id = e;
        row.arm = "fp32";
        row.precision = "fp32";
        row.device = "cpu";
        const int64_t id = searches.create(row);
        row.status = "finished";
        row.max_batch = 3;
        row.safe_batch = 2;
        searches.finish(id, row);
        ws.window->session()->pollNow();
        view->refresh();
        QTRY_COMPARE(int(view->chart().bars.size()), 1);
        plot->replot();
        QVERIFY(plot->showsAxisValues());
        QVERIFY(plot->message().isEmpty());
        QVector<double> ticks;
        plot->yAxis->ticker()->generate(plot->yAxis->range(), QLocale(), 'g', 6, ticks, nullptr,
                                        nullptr);
        QVERIFY(ticks.size() >= 2);
        for (double t : ticks) {
            QVERIFY2(t == std::round(t), qPrintable(QString::number(t)));
        }
    }

    // The budget counts what the search adds, not the window's own memory: a budget
    // of half what this process already holds (LibTorch, Qt, the window) finds every
    // arm's batches.
    void theBudgetLeavesOutTheWindowsOwnMemory() {
        test::Workspace ws;
        QVERIFY(ws.open());
        const config::ExperimentSpec spec = test::tinySpec();
        store::Database::open(ws.dbPath().toStdString())
            ->createExperiment("capacity", config::specToJsonText(spec));
        ws.window->session()->pollNow();
        ws.window->show();
        ws.window->showCapacity();
        CapacityView* view = ws.window->capacity();
        view->setTrialSteps(1);
        view->upperBoundField()->setValue(16);
        const qint64 resident = residentMiB();
        QVERIFY2(resident > 128, qPrintable(QString::number(resident)));
        view->budgetField()->setText(QString("%1M").arg(resident / 2));
        TrainingWorker* worker = ws.window->training()->worker();
        QSignalSpy finished(worker, &TrainingWorker::batchSearchFinished);
        view->findButton()->click();
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, kTrainTimeoutMs);
        QVERIFY2(finished[0][2].toString().isEmpty(), qPrintable(finished[0][2].toString()));
        QTRY_COMPARE(int(view->chart().bars.size()), int(spec.arms.size()));
        for (const auto& bar : view->chart().bars) {
            QCOMPARE(bar.max_batch, int64_t{16});
            QVERIFY2(bar.peak_at_max < (resident / 2) << 20, bar.arm.c_str());
        }
    }

  private:
    /// This process's resident set in MiB (VmRSS).
    static qint64 residentMiB() {
        QFile status("/proc/self/status");
        if (!status.open(QIODevice::ReadOnly | QIODevice::Text)) {
            return 0;
        }
        for (const QByteArray& line : status.readAll().split('\n')) {
            if (line.startsWith("VmRSS:")) {
                return line.mid(6).trimmed().split(' ').first().toLongLong() / 1024;
            }
        }
        return 0;
    }
};

QTEST_MAIN(CapacityTest)
#include "test_ui_capacity.moc"
