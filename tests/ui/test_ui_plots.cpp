// Plot behaviour over rows in the store: x-axis modes, smoothing, log-y, the
// shared legend, redraw coalescing, labels across experiments; and the pure
// series functions the plots use.
#include <QCheckBox>
#include <QComboBox>
#include <QSignalSpy>
#include <QSlider>
#include <QtTest>

#include "UiTestSupport.h"
#include "core/analysis/Decimation.h"
#include "core/analysis/PlotSeries.h"
#include "core/store/Database.h"
#include "ui/data/RunDataCache.h"
#include "ui/data/StoreSession.h"
#include "ui/plots/PlotPanel.h"
#include "ui/plots/PlotsView.h"
#include "ui/report/Palette.h"
#include "ui/runs/CompareView.h"
#include "ui/runs/RunTreeModel.h"
#include "ui/runs/SummaryTableModel.h"

using namespace ampbench;
using namespace ampbench::ui;

namespace {

std::vector<run::StepRecord> steps(int n, int samplesPerStep, double msPerStep) {
    std::vector<run::StepRecord> out;
    for (int s = 1; s <= n; ++s) {
        run::StepRecord r;
        r.step = s;
        r.samples = static_cast<int64_t>(s) * samplesPerStep;
        r.loss = 3.0 / s + (s % 2 ? 0.2 : -0.2);
        r.step_ms = msPerStep;
        r.wall_s = s * msPerStep / 1000.0;
        r.loss_scale = s < 5 ? 65536 : 32768;
        r.skipped = s == 5;
        r.mem_allocated = r.mem_peak = static_cast<int64_t>(samplesPerStep) << 20;
        out.push_back(r);
    }
    return out;
}

/// A database with two experiments: "a" (fp32 seeds 1 and 2, amp-k4) and "b" (fp32).
struct Filled : test::Workspace {
    std::vector<int64_t> runs;
    Filled() {
        open();
        auto db = store::Database::open(dbPath().toStdString());
        const int64_t a = db->createExperiment("a", "{}");
        for (auto [arm, seed, k] : {std::tuple{"fp32", 1, 1}, {"fp32", 2, 1}, {"amp-k4", 1, 4}}) {
            const int64_t r = db->createRun(a, arm, k == 1 ? 0 : 1, seed, "{}", 40 / k);
            db->insertSteps(r, steps(40 / k, 64 * k, k == 1 ? 20.0 : 50.0));
            db->insertEvals(r,
                            {{20 / k, 20 * 64, 0.9, 0.6, 0.4}, {40 / k, 40 * 64, 0.7, 0.7, 0.8}});
            db->finishRun(r, run::RunStatus::Finished, "");
            runs.push_back(r);
        }
        const int64_t b = db->createExperiment("b", "{}");
        const int64_t r = db->createRun(b, "fp32", 0, 1, "{}", 10);
        db->insertSteps(r, steps(10, 64, 10.0));
        runs.push_back(r);
        window->session()->pollNow();
    }
    PlotsView* plots() const { return window->compare()->plots(); }
    void show(const QList<qint64>& ids) {
        window->runModel()->setCheckedRuns(ids);
        QTRY_COMPARE(window->cache()->runs(), ids);
        plots()->redrawNow();
    }
};

}  // namespace

class PlotsTest : public QObject {
    Q_OBJECT
  private Q_SLOTS:
    void newestExperimentIsShownOnOpen() {
        Filled f;
        QVERIFY(f.window->openDatabase(f.dbPath()));  // reopen: ticks the newest experiment
        QTRY_COMPARE(f.window->cache()->runs(), QList<qint64>{f.runs[3]});
    }

    void xAxisModes() {
        Filled f;
        f.show({f.runs[0], f.runs[2]});
        auto* xAxis = f.plots()->findChild<QComboBox*>("xAxis");
        QVERIFY(xAxis);
        QCPGraph* k4 = f.plots()->lossPlot()->curves()[1];
        xAxis->setCurrentIndex(xAxis->findData(int(analysis::XAxis::Step)));
        f.plots()->redrawNow();
        k4 = f.plots()->lossPlot()->curves()[1];
        QCOMPARE(k4->data()->at(9)->key, 10.0);
        xAxis->setCurrentIndex(xAxis->findData(int(analysis::XAxis::Samples)));
        f.plots()->redrawNow();
        k4 = f.plots()->lossPlot()->curves()[1];
        QCOMPARE(k4->data()->at(9)->key, 10.0 * 256);  // K = 4: 256 samples per step
        QCOMPARE(f.plots()->lossPlot()->curves()[0]->data()->at(39)->key, 40.0 * 64);
        xAxis->setCurrentIndex(xAxis->findData(int(analysis::XAxis::WallSeconds)));
        f.plots()->redrawNow();
        k4 = f.plots()->lossPlot()->curves()[1];
        QCOMPARE(k4->data()->at(9)->key, 0.5);
        QVERIFY(f.settings->plotXAxis() == analysis::XAxis::WallSeconds);
    }

    void smoothingLogAndSkippedMarks() {
        Filled f;
        f.show({f.runs[0]});
        auto* smoothing = f.plots()->findChild<QSlider*>("smoothing");
        smoothing->setValue(0);
        f.plots()->redrawNow();
        PlotPanel* loss = f.plots()->lossPlot();
        // Raw: one curve and the skipped-step marks.
        QCOMPARE(loss->graphCount(), 2);
        QCOMPARE(loss->curves()[0]->data()->at(0)->value, 3.2);
        QCOMPARE(loss->graph(1)->data()->size(), 1);
        QCOMPARE(loss->graph(1)->data()->at(0)->key, 5.0 * 64);

        smoothing->setValue(80);
        f.plots()->redrawNow();
        QCOMPARE(loss->graphCount(), 3);  // smoothed, faded raw, marks
        QCOMPARE(loss->curves().size(), 1);
        QVERIFY(loss->curves()[0]->data()->at(1)->value != 3.0 / 2 - 0.2);
        QCOMPARE(f.settings->plotSmoothing(), 80);

        f.plots()->findChild<QCheckBox*>("logY")->setChecked(true);
        f.plots()->redrawNow();
        QCOMPARE(loss->yAxis->scaleType(), QCPAxis::stLogarithmic);
        QVERIFY(f.settings->plotLogY());
    }

    void legendHidesACurveInEveryPanel() {
        Filled f;
        f.show({f.runs[0], f.runs[1]});
        PlotPanel* loss = f.plots()->lossPlot();
        const QString label = loss->curves()[1]->name();
        QCOMPARE(label, QString("fp32 \u00b7 seed 2"));
        loss->setHidden(label, true);
        Q_EMIT loss->hiddenToggled(label, true);
        f.plots()->redrawNow();  // rebuilt curves remember it
        QVERIFY(!f.plots()->lossPlot()->curves()[1]->visible());
        QVERIFY(!f.plots()->memoryPlot()->curves()[1]->visible());
        QVERIFY(f.plots()->memoryPlot()->curves()[0]->visible());
    }

    void seedsShareTheArmColourInShades() {
        Filled f;
        f.show({f.runs[0], f.runs[1], f.runs[2]});
        const auto& curves = f.plots()->lossPlot()->curves();
        const QColor s1 = curves[0]->pen().color(), s2 = curves[1]->pen().color();
        QVERIFY(s1 != s2);
        QCOMPARE(s1.hslHue(), s2.hslHue());
        QVERIFY(curves[2]->pen().color().hslHue() != s1.hslHue());
        QCOMPARE(report::seedShade(report::armColor(0), 0, 1), report::armColor(0));
    }

    void severalExperimentsAreLabelledAndCompared() {
        Filled f;
        f.show({f.runs[0], f.runs[2], f.runs[3]});
        QCOMPARE(f.plots()->lossPlot()->curves()[2]->name(), QString("b/fp32 \u00b7 seed 1"));
        SummaryTableModel* summary = f.window->compare()->summaryModel();
        QTRY_COMPARE(summary->rowCount(), 3);
        QCOMPARE(summary->arms()[0].arm, std::string("a/fp32"));
        QCOMPARE(summary->arms()[0].speedup, 1.0);
        // amp-k4: 256 samples per 50 ms step vs fp32's 64 per 20 ms.
        QCOMPARE(summary->arms()[1].speedup, (256 / 0.05) / (64 / 0.02));
        const QString tsv = f.window->compare()->summaryTsv();
        QVERIFY(tsv.contains("a/amp-k4"));
        QVERIFY(tsv.contains("b/fp32"));
    }

    void zoomAndPanAreLinkedAcrossPanels() {
        Filled f;
        f.show({f.runs[0], f.runs[1]});
        PlotPanel* loss = f.plots()->lossPlot();
        PlotPanel* stepTime = f.plots()->stepTimePlot();
        PlotPanel* memory = f.plots()->memoryPlot();
        PlotPanel* bars = f.plots()->armBarsPlot();
        for (PlotPanel* p : {loss, stepTime}) {
            p->setViewport(QRect(0, 0, 600, 400));  // laid out without showing the window
            p->replot();
        }
        const QCPRange full = memory->xAxis->range();
        QCOMPARE(loss->xAxis->range(), full);
        const QCPRange barsRange = bars->xAxis->range();

        // Wheel over the loss plot: its x range shrinks and the others follow.
        const QPointF at = loss->axisRect()->center();
        QWheelEvent wheel(at, loss->mapToGlobal(at), QPoint(), QPoint(0, 120), Qt::NoButton,
                          Qt::NoModifier, Qt::NoScrollPhase, false);
        QApplication::sendEvent(loss, &wheel);
        const QCPRange zoomed = loss->xAxis->range();
        QVERIFY(zoomed.size() < 0.95 * full.size());
        for (PlotPanel* p :
             {f.plots()->validationPlot(), stepTime, memory, f.plots()->lossScalePlot()}) {
            QCOMPARE(p->xAxis->range(), zoomed);
            QVERIFY(p->userView());
        }
        QCOMPARE(bars->xAxis->range(), barsRange);  // arms, not x: not linked
        f.plots()->redrawNow();                     // a redraw keeps the zoom
        QCOMPARE(memory->xAxis->range(), zoomed);

        // Dragging the step time plot pans the loss plot with it.
        const QPoint from = stepTime->axisRect()->center();
        const QPoint to = from + QPoint(-100, 0);
        QMouseEvent press(QEvent::MouseButtonPress, from, stepTime->mapToGlobal(from),
                          Qt::LeftButton, Qt::LeftButton, Qt::NoModifier);
        QMouseEvent move(QEvent::MouseMove, to, stepTime->mapToGlobal(to), Qt::NoButton,
                         Qt::LeftButton, Qt::NoModifier);
        QMouseEvent release(QEvent::MouseButtonRelease, to, stepTime->mapToGlobal(to),
                            Qt::LeftButton, Qt::NoButton, Qt::NoModifier);
        QApplication::sendEvent(stepTime, &press);
        QApplication::sendEvent(stepTime, &move);
        QApplication::sendEvent(stepTime, &release);
        const QCPRange panned = stepTime->xAxis->range();
        QVERIFY(panned.lower > zoomed.lower);
        QCOMPARE(loss->xAxis->range(), panned);
        QCOMPARE(memory->xAxis->range(), panned);

        // A double click on one resets them all.
        QMouseEvent twice(QEvent::MouseButtonDblClick, from, memory->mapToGlobal(from),
                          Qt::LeftButton, Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(memory, &twice);
        for (PlotPanel* p : {loss, stepTime, memory}) {
            QVERIFY(!p->userView());
            QCOMPARE(p->xAxis->range(), full);
        }
    }

    void longCurvesAreCutToThePixelsWithSpikesKept() {
        test::Workspace ws;
        ws.open();
        auto db = store::Database::open(ws.dbPath().toStdString());
        const int64_t e = db->createExperiment("long", "{}");
        const int64_t r = db->createRun(e, "fp32", 0, 1, "{}", 50000);
        auto rows = steps(50000, 64, 20.0);
        rows[31337].step_ms = 900.0;  // one slow step among 50,000
        db->insertSteps(r, rows);
        ws.window->session()->pollNow();
        ws.window->runModel()->setCheckedRuns({r});
        QTRY_COMPARE(
            ws.window->cache()->series(r) ? ws.window->cache()->series(r)->steps.size() : size_t(0),
            size_t(50000));
        PlotsView* plots = ws.window->compare()->plots();
        PlotPanel* stepTime = plots->stepTimePlot();
        stepTime->setViewport(QRect(0, 0, 600, 400));
        plots->redrawNow();
        QCPGraph* curve = stepTime->curves()[0];
        const int px = std::max(PlotPanel::kMinBuckets, stepTime->axisRect()->width());
        QVERIFY(curve->data()->size() <= int(analysis::kPointsPerBucket) * px + 2);
        QCOMPARE(stepTime->curveOf(curve)->size(), size_t(50000));
        bool spike = false;
        for (const auto& p : *curve->data()) {
            spike = spike || p.value == 900.0;
        }
        QVERIFY(spike);
        QCOMPARE(curve->data()->at(0)->key, 64.0);
        QCOMPARE((curve->data()->constEnd() - 1)->key, 50000.0 * 64);

        // Zoomed in far enough, every point on show is drawn.
        stepTime->followXRange(QCPRange(31337 * 64.0, 31437 * 64.0));
        stepTime->replot();
        int inRange = 0;
        for (const auto& p : *curve->data()) {
            inRange += p.key >= 31337 * 64.0 && p.key <= 31437 * 64.0 ? 1 : 0;
        }
        QCOMPARE(inRange, 101);
    }

    void redrawsAreCoalesced() {
        Filled f;
        f.show({f.runs[0]});
        QSignalSpy redrawn(f.plots(), &PlotsView::redrawn);
        for (int i = 0; i < 50; ++i) {
            f.plots()->scheduleRedraw();
        }
        QVERIFY(redrawn.wait(1000));
        QTest::qWait(3 * PlotsView::kRedrawIntervalMs);
        QCOMPARE(redrawn.size(), 1);
    }

    void seriesFunctions() {
        std::vector<run::StepRecord> s(3);
        for (int i = 0; i < 3; ++i) {
            s[i].step = i + 1;
            s[i].samples = (i + 1) * 32;
            s[i].wall_s = 0.5 * (i + 1);
            s[i].loss = i == 1 ? -1.0 : 1.0;
            s[i].mem_allocated = int64_t(i + 1) << 20;
            s[i].skipped = i == 2;
        }
        using analysis::XAxis;
        QCOMPARE(analysis::stepXs(s, XAxis::Step), (std::vector<double>{1, 2, 3}));
        QCOMPARE(analysis::stepXs(s, XAxis::Samples), (std::vector<double>{32, 64, 96}));
        QCOMPARE(analysis::stepXs(s, XAxis::WallSeconds), (std::vector<double>{0.5, 1, 1.5}));
        QCOMPARE(analysis::stepValues(s, analysis::StepMetric::MemAllocatedMiB),
                 (std::vector<double>{1, 2, 3}));
        const auto log = analysis::forLogAxis(analysis::stepValues(s, analysis::StepMetric::Loss));
        QCOMPARE(log[0], 1.0);
        QVERIFY(std::isnan(log[1]));
        QCOMPARE(analysis::skippedIndices(s), std::vector<size_t>{2});
        QCOMPARE(analysis::smoothingWeight(0), 0.0);
        QCOMPARE(analysis::smoothingWeight(100), 0.99);
        QCOMPARE(analysis::smoothingWeight(500), 0.99);
    }
};

QTEST_MAIN(PlotsTest)
#include "test_ui_plots.moc"
