// The plots' axes and their export: no axis shows values a run cannot have (a run's
// first point put "samples seen" between -4000 and 4000; an empty panel read 0 to 5
// samples and 0 to 5 % accuracy), and an exported image has
// a size and folder of its own, remembered, and a legend of what it draws.
#include <QAbstractButton>
#include <QApplication>
#include <QComboBox>
#include <QDialog>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QLineEdit>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTimer>
#include <QtTest>

#include "UiTestSupport.h"
#include "core/store/Database.h"
#include "ui/data/RunDataCache.h"
#include "ui/data/StoreSession.h"
#include "ui/plots/PlotExport.h"
#include "ui/plots/PlotPanel.h"
#include "ui/plots/PlotsView.h"
#include "ui/runs/CompareView.h"
#include "ui/runs/RunTreeModel.h"

using namespace ampbench;
using namespace ampbench::ui;

namespace {

run::StepRecord step(int64_t s) {
    run::StepRecord r;
    r.step = s;
    r.samples = 4000 * s;
    r.loss = 2.3;
    r.step_ms = 12;
    r.wall_s = 0.5 * s;
    r.loss_scale = 65536;
    r.mem_allocated = r.mem_peak = 64 << 20;
    return r;
}

bool isCategoryAxis(const PlotPanel& p) {
    return !p.xAxis->ticker().dynamicCast<QCPAxisTickerText>().isNull();
}

}  // namespace

class PlotAxesTest : public QObject {
    Q_OBJECT
  private Q_SLOTS:
    // One point: every panel's x axis starts at 0 or later and holds the point; its
    // value axes hold the value with room either side; on every x choice.
    void aRunsFirstPointGivesNoNegativeAxis() {
        test::Workspace ws;
        QVERIFY(ws.open());
        auto db = store::Database::open(ws.dbPath().toStdString());
        const int64_t e = db->createExperiment("one point", "{}");
        const int64_t r = db->createRun(e, "fp32", 0, 1, "{}", 100);
        db->insertSteps(r, {step(1)});
        ws.window->session()->pollNow();
        ws.window->runModel()->setCheckedRuns({r});
        QTRY_VERIFY(ws.window->cache()->series(r) &&
                    ws.window->cache()->series(r)->steps.size() == 1);
        ws.window->resize(1280, 720);
        ws.window->show();
        PlotsView* plots = ws.window->compare()->plots();
        auto* xChoice = plots->findChild<QComboBox*>("xAxis");
        QVERIFY(xChoice);
        const double at[] = {1, 4000, 0.5};  // step, samples, wall seconds
        for (int mode = 0; mode < xChoice->count(); ++mode) {
            xChoice->setCurrentIndex(mode);
            plots->resetViews();
            plots->redrawNow();
            int checked = 0;
            for (int i = 0; i < PlotsView::kPanels; ++i) {
                PlotPanel* p = plots->panel(i);
                if (!plots->isPanelShown(i) || isCategoryAxis(*p) || p->curves().isEmpty()) {
                    continue;
                }
                ++checked;
                const QCPRange x = p->xAxis->range();
                const QString where = QStringLiteral("%1 on %2: x %3 to %4")
                                          .arg(p->title(), xChoice->currentText())
                                          .arg(x.lower)
                                          .arg(x.upper);
                QVERIFY2(x.lower >= 0, qPrintable(where));
                QVERIFY2(x.contains(at[mode]) && x.upper > at[mode], qPrintable(where));
                const QCPRange y = p->yAxis->range();
                QVERIFY2(y.size() > 0, qPrintable(where));
            }
            QVERIFY2(checked >= 2, qPrintable(xChoice->currentText()));
            // Panned or zoomed out past the start, it stops at 0.
            PlotPanel* loss = plots->lossPlot();
            loss->xAxis->setRange(-500, 300);
            QCOMPARE(loss->xAxis->range().lower, 0.0);
            QVERIFY(loss->xAxis->range().upper >= 300);
        }
    }

    // A flat memory series (617.36 to 617.44 MiB) gets an axis of a few MiB around it,
    // not 0.01 MiB ticks that magnify the allocator's jitter into a landscape; a curve
    // that moves keeps its own range.
    void aFlatSeriesGetsASensibleRange() {
        test::Workspace ws;
        QVERIFY(ws.open());
        auto db = store::Database::open(ws.dbPath().toStdString());
        const int64_t e = db->createExperiment("flat", "{}");
        const int64_t r = db->createRun(e, "fp32", 0, 1, "{}", 100);
        std::vector<run::StepRecord> rows;
        for (int64_t s = 1; s <= 60; ++s) {
            run::StepRecord st = step(s);
            st.loss = 2.3 - 0.02 * static_cast<double>(s);
            const double mib = 617.36 + 0.08 * static_cast<double>(s % 3) / 2.0;
            st.mem_allocated = st.mem_peak = static_cast<int64_t>(mib * (1 << 20));
            rows.push_back(st);
        }
        db->insertSteps(r, rows);
        ws.window->session()->pollNow();
        ws.window->runModel()->setCheckedRuns({r});
        QTRY_VERIFY(ws.window->cache()->series(r) &&
                    ws.window->cache()->series(r)->steps.size() == rows.size());
        PlotsView* plots = ws.window->compare()->plots();
        plots->resetViews();
        const QCPRange memory = plots->memoryPlot()->yAxis->range();
        QVERIFY2(memory.contains(617.36) && memory.contains(617.44) && memory.size() >= 10,
                 qPrintable(QStringLiteral("%1 to %2 MiB").arg(memory.lower).arg(memory.upper)));
        QVERIFY(memory.lower > 0);
        const QCPRange loss = plots->lossPlot()->yAxis->range();
        QVERIFY2(loss.size() < 3.0,
                 qPrintable(QStringLiteral("%1 to %2").arg(loss.lower).arg(loss.upper)));
    }

    // With nothing ticked the panels show their titles and axes but no numbers (QCustomPlot's
    // default range, 0 to 5, read as data); the first point brings them, and the bars'
    // the first finished run.
    void anEmptyPanelShowsNoNumbers() {
        test::Workspace ws;
        QVERIFY(ws.open());
        ws.window->resize(1280, 720);
        ws.window->show();
        ws.window->tabs()->setCurrentWidget(ws.window->compare());
        QVERIFY(QTest::qWaitForWindowExposed(ws.window.get()));
        PlotsView* plots = ws.window->compare()->plots();
        plots->redrawNow();
        int shown = 0;
        for (int i = 0; i < PlotsView::kPanels; ++i) {
            if (plots->isPanelShown(i)) {
                ++shown;
                QVERIFY2(!plots->panel(i)->showsAxisValues(), qPrintable(plots->panel(i)->title()));
            }
        }
        QVERIFY(shown >= 4);

        auto db = store::Database::open(ws.dbPath().toStdString());
        const int64_t e = db->createExperiment("points", "{}");
        const int64_t r = db->createRun(e, "fp32", 0, 1, "{}", 100);
        db->insertSteps(r, {step(1), step(2)});
        ws.window->session()->pollNow();
        ws.window->runModel()->setCheckedRuns({r});
        QTRY_VERIFY(ws.window->cache()->series(r) &&
                    ws.window->cache()->series(r)->steps.size() == 2);
        plots->redrawNow();
        QVERIFY(plots->lossPlot()->showsAxisValues());
        // The bars are of finished runs: while this one trains they have none, and say so
        // (they drew 0 to 1 samples/s).
        PlotPanel* bars = plots->armBarsPlot();
        QVERIFY(!bars->showsAxisValues());
        QVERIFY2(bars->message().contains("No finished run"), qPrintable(bars->message()));
        QCOMPARE(bars->categoryTickLabels(), QStringList{QStringLiteral("fp32")});
        QVERIFY(bars->xAxis->tickLabelColor().alpha() > 0);  // the arm's name shows
        db->markRunning(r, "{}");
        db->finishRun(r, run::RunStatus::Finished, "");
        ws.window->session()->pollNow();
        QTRY_VERIFY(bars->showsAxisValues() && bars->message().isEmpty());
    }

    // Runs evaluated only at their end (the smoke preset's): the validation marker at the
    // last point shows whole, not cut in half by the plot's edge.
    void anEvaluationAtTheEndShowsWhole() {
        test::Workspace ws;
        QVERIFY(ws.open());
        auto db = store::Database::open(ws.dbPath().toStdString());
        const int64_t e = db->createExperiment("evaluated at the end", "{}");
        const int64_t r = db->createRun(e, "fp32", 0, 1, "{}", 10);
        std::vector<run::StepRecord> steps;
        for (int64_t s = 1; s <= 10; ++s) {
            steps.push_back(step(s));
        }
        db->insertSteps(r, steps);
        db->insertEvals(r, {{10, 10 * 4000, 0.5, 0.8, 5.0}});
        ws.window->session()->pollNow();
        ws.window->runModel()->setCheckedRuns({r});
        QTRY_VERIFY(ws.window->cache()->series(r) &&
                    ws.window->cache()->series(r)->evals.size() == 1);
        ws.window->resize(1280, 720);
        ws.window->tabs()->setCurrentWidget(ws.window->compare());
        ws.window->show();
        QVERIFY(QTest::qWaitForWindowExposed(ws.window.get()));
        PlotsView* plots = ws.window->compare()->plots();
        plots->resetViews();
        plots->redrawNow();
        PlotPanel* validation = plots->validationPlot();
        QVERIFY(!validation->curves().isEmpty());
        // The circle is 5 pixels across, drawn with a pen of 1.
        const double at = validation->xAxis->coordToPixel(10 * 4000);
        QVERIFY2(at + 3 <= validation->axisRect()->right(),
                 qPrintable(QStringLiteral("the marker at %1 px, the edge at %2 px")
                                .arg(at)
                                .arg(validation->axisRect()->right())));
    }

    // The export dialog offers 1200 × 700 (not the panel's few hundred pixels) in the
    // documents folder, and next time the size and folder used last.
    void anExportRemembersItsSizeAndFolder() {
        QTemporaryDir out;
        test::Workspace ws;
        PlotPanel panel(QStringLiteral("Training loss"));
        panel.resize(348, 190);
        QCPGraph* g = panel.addCurve(QStringLiteral("fp32"), Qt::blue);
        g->addData({1, 2, 3}, {3, 2, 1});
        panel.addCurve(QStringLiteral("bf16 (no point yet)"), Qt::red);
        QSize offered;
        QString folderOffered;
        QString path = out.filePath("loss.png");
        auto answer = [&](const QSize& size) {
            // The size dialog, then the file dialog, each answered once it is up.
            QTimer::singleShot(0, [&, size] {
                auto* dialog = qobject_cast<QDialog*>(QApplication::activeModalWidget());
                QVERIFY(dialog);
                const auto boxes = dialog->findChildren<QSpinBox*>();
                QCOMPARE(boxes.size(), 2);
                offered = QSize(boxes[0]->value(), boxes[1]->value());
                boxes[0]->setValue(size.width());
                boxes[1]->setValue(size.height());
                QTimer::singleShot(0, [&] {
                    auto* files = qobject_cast<QFileDialog*>(QApplication::activeModalWidget());
                    QVERIFY(files);
                    folderOffered = files->directory().absolutePath();
                    files->selectFile(path);
                    QMetaObject::invokeMethod(files, "accept");
                });
                dialog->accept();
            });
        };
        QApplication::setAttribute(Qt::AA_DontUseNativeDialogs);
        answer(QSize(800, 500));
        exportPlotWithDialog(panel, nullptr);
        QCOMPARE(offered, QSize(1200, 700));
        QVERIFY2(QFileInfo::exists(path), qPrintable(folderOffered));
        QCOMPARE(QImage(path).size(), QSize(800, 500));
        path = out.filePath("loss-small.png");
        answer(QSize(640, 400));
        exportPlotWithDialog(panel, nullptr);
        QCOMPARE(offered, QSize(800, 500));
        QCOMPARE(folderOffered, QFileInfo(out.path()).absoluteFilePath());
        QCOMPARE(ws.settings->plotExportSize(), QSize(640, 400));
    }

    // The figure's legend names the curves it draws: an arm with no point is left out.
    void theFiguresLegendListsOnlyCurvesWithPoints() {
        PlotPanel panel(QStringLiteral("Training loss"));
        panel.resize(600, 400);
        QCPGraph* g = panel.addCurve(QStringLiteral("fp32"), Qt::blue);
        g->addData({1, 2, 3}, {3, 2, 1});
        panel.addCurve(QStringLiteral("bf16"), Qt::red);
        panel.beginFigure(600);
        QStringList named;
        for (int i = 0; i < panel.legend->itemCount(); ++i) {
            if (auto* item = qobject_cast<QCPPlottableLegendItem*>(panel.legend->item(i))) {
                named << item->plottable()->name();
            }
        }
        panel.endFigure();
        QCOMPARE(named, QStringList{QStringLiteral("fp32")});
        QCOMPARE(panel.legend->itemCount(), 2);  // the screen's legend as it was
    }
};

QTEST_MAIN(PlotAxesTest)
#include "test_ui_plot_axes.moc"
