// The Max batch tab's progress: sizes in MiB/GiB, the search's time left.
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTableWidget>
#include <QtTest>
#include <cmath>

#include "UiTestSupport.h"
#include "core/config/SpecJson.h"
#include "core/store/Database.h"
#include "ui/capacity/CapacityView.h"
#include "ui/data/StoreSession.h"
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

        view->budgetField()->setText("1M");
        finished.clear();
        QTRY_VERIFY(view->findButton()->isEnabled());  // once the window heard of the end
        view->findButton()->click();
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, kTrainTimeoutMs);
        const QString error = finished[0][2].toString();
        QVERIFY2(error.contains("1.00 MiB") && !error.contains(kRawBytes), qPrintable(error));
        QTRY_VERIFY(view->table()->rowCount() == int(spec.arms.size()));
        for (int row = 0; row < view->table()->rowCount(); ++row) {
            const QString note = view->table()->item(row, view->table()->columnCount() - 1)->text();
            QVERIFY2(!note.contains(kRawBytes), qPrintable(note));
        }
    }
};

QTEST_MAIN(CapacityTest)
#include "test_ui_capacity.moc"
