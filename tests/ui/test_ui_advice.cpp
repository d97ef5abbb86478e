// The Advice tab: an advice recorded in the database shows as its table, its chart (each
// candidate a point, the front drawn, the ruled-out ones crossed with why) and its
// recommendation, which opens as a comparison in the editor; and an advice trained from
// the tab on the worker, its progress shown while it works.
#include <qcustomplot.h>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QSignalSpy>
#include <QTableWidget>
#include <QtTest>
#include <cmath>

#include "UiTestSupport.h"
#include "core/config/PlannedArm.h"
#include "core/config/SpecJson.h"
#include "core/store/Database.h"
#include "ui/advice/AdviceView.h"
#include "ui/data/StoreSession.h"
#include "ui/editor/ExperimentEditor.h"
#include "ui/plots/PlotPanel.h"
#include "ui/training/TrainingController.h"
#include "ui/training/TrainingWorker.h"

using namespace ampbench;
using namespace ampbench::ui;

namespace {

constexpr int kTrainTimeoutMs = 300000;

/// A model and data that train in milliseconds a step.
config::ExperimentSpec tinyModel() {
    config::ExperimentSpec s = test::tinySpec();
    s.model.name = "mlp";
    s.model.width = 8;
    s.model.depth = 1;
    s.data.name = "synthetic-images";
    s.data.channels = 1;
    s.data.height = 8;
    s.data.width = 8;
    s.micro_batch = 4;
    return s;
}

/// A run of `arm` with 60 steps whose loss falls from 2 by `drop` over them (a pass:
/// 12 steps and no evaluation), each step taking `ms_per_sample` per sample.
void addRun(store::Database& db, int64_t experiment, const config::ExperimentSpec& spec,
            int arm_index, uint64_t seed, bool pass, double ms_per_sample, double drop,
            double accuracy, int64_t peak_mib) {
    const config::ArmSpec& arm = spec.arms[static_cast<size_t>(arm_index)];
    config::PlannedArm planned = config::planArm(spec, arm, false);
    planned.timing_pass = pass;
    const int64_t steps = pass ? 12 : 60;
    const int64_t id = db.createRun(experiment, arm.name, arm_index, seed,
                                    config::plannedArmToJson(planned), steps);
    db.markRunning(id, R"({"device":"cpu","device_name":"test","hostname":"h"})");
    std::vector<run::StepRecord> rows;
    const int64_t batch = planned.effective_batch;
    for (int64_t i = 1; i <= steps; ++i) {
        run::StepRecord s;
        s.step = i;
        s.samples = i * batch;
        s.loss = 2.0 - drop * static_cast<double>(i) / 60.0 + 0.001 * static_cast<double>(seed);
        s.step_ms = ms_per_sample * static_cast<double>(batch) * (1.0 + 0.01 * (i % 3));
        s.timed = i > 2;
        s.mem_peak = peak_mib << 20;
        rows.push_back(s);
    }
    db.insertSteps(id, rows);
    if (!pass) {
        run::EvalRecord e;
        e.step = steps;
        e.samples = steps * batch;
        e.val_accuracy = accuracy + 0.001 * static_cast<double>(seed);
        e.val_loss = rows.back().loss;
        db.insertEvals(id, {e});
    }
    db.finishRun(id, run::RunStatus::Finished, "", run::FailureKind::None);
}

}  // namespace

class AdviceTest : public QObject {
    Q_OBJECT
  private Q_SLOTS:
    void aRecordedAdviceShowsItsTableChartAndRecommendation() {
        test::Workspace ws;
        QVERIFY(ws.open());
        config::ExperimentSpec spec = tinyModel();
        spec.name = "tiny-advice";
        spec.arms.clear();
        for (const auto& [name, precision, batch] :
             {std::tuple{"fp32", config::Precision::Fp32, 0},
              std::tuple{"amp-bf16", config::Precision::AmpBf16, 0},
              std::tuple{"amp-bf16-b8", config::Precision::AmpBf16, 8}}) {
            config::ArmSpec arm;
            arm.name = name;
            arm.precision = precision;
            arm.micro_batch = batch;
            spec.arms.push_back(arm);
        }
        spec.seeds = {1, 2};
        auto db = store::Database::open(ws.dbPath().toStdString());
        const int64_t e = db->createExperiment(spec.name, config::specToJsonText(spec));
        addRun(*db, e, spec, 0, 1, true, 1.0, 0, 0, 300);
        addRun(*db, e, spec, 1, 1, true, 0.5, 0, 0, 200);  // twice fp32's samples/s
        addRun(*db, e, spec, 2, 1, true, 0.4, 0, 0, 400);
        for (uint64_t seed : {1, 2}) {
            addRun(*db, e, spec, 0, seed, false, 1.0, 1.0, 0.85, 300);
            addRun(*db, e, spec, 1, seed, false, 1.0, 0.1, 0.40, 300);  // lost its progress
        }
        ws.window->session()->pollNow();
        ws.window->show();
        ws.window->adviseAction()->trigger();
        AdviceView* view = ws.window->advice();
        QCOMPARE(ws.window->tabs()->currentWidget(), view);
        QSignalSpy shown(view, &AdviceView::shown);
        view->showAdvice(e);
        QTRY_COMPARE(shown.count(), 1);
        QCOMPARE(view->table()->rowCount(), 3);
        // fp32 is recommended: the faster bf16 diverged, the fastest was never checked.
        QCOMPARE(view->advice().kind, analysis::Recommendation::KeepBaseline);
        QVERIFY2(view->recommendationLabel()->text().contains("keep fp32 at batch 4"),
                 qPrintable(view->recommendationLabel()->text()));
        QVERIFY(view->openButton()->isEnabled());
        bool tipped = false;
        for (int r = 0; r < view->table()->rowCount(); ++r) {
            if (view->table()->item(r, 1)->text() == "amp-bf16") {
                QCOMPARE(view->table()->item(r, 0)->text(), QStringLiteral("ruled out"));
                tipped = view->table()->item(r, 1)->toolTip().contains("diverged");
            }
        }
        QVERIFY(tipped);
        // The chart: a point per candidate measured, the ruled-out one a cross named with
        // why, the recommendation a star, and the front through what nothing beats.
        PlotPanel* chart = view->chart();
        QMap<QString, QCPScatterStyle::ScatterShape> shapes;
        bool front = false;
        for (int g = 0; g < chart->graphCount(); ++g) {
            front = front || chart->graph(g)->name() == "front";
            shapes[chart->graph(g)->name()] = chart->graph(g)->scatterStyle().shape();
        }
        QVERIFY(front);
        QCOMPARE(shapes.value("amp-bf16"), QCPScatterStyle::ssCross);
        QCOMPARE(shapes.value("fp32"), QCPScatterStyle::ssStar);
        QCOMPARE(shapes.value("amp-bf16-b8"), QCPScatterStyle::ssDisc);
        // Every point keeps its name through replots, the recommendation's included (the
        // chart's own message item was once cleared under it and blanked the first name).
        chart->replot();
        chart->replot();
        bool named = false;
        QStringList names;
        for (int i = 0; i < chart->itemCount(); ++i) {
            if (auto* text = qobject_cast<QCPItemText*>(chart->item(i))) {
                named = named || (text->text().startsWith("amp-bf16\n") &&
                                  text->text().contains("diverged"));
                names << text->text().section('\n', 0, 0);
            }
        }
        QVERIFY(named);
        QVERIFY2(names.contains("fp32") && names.contains("amp-bf16-b8"),
                 qPrintable(names.join(", ")));
        // Open as comparison: the baseline and the recommendation in the editor.
        view->openButton()->click();
        QCOMPARE(ws.window->tabs()->currentWidget(), ws.window->editor());
        const auto opened = ws.window->editor()->spec();
        QCOMPARE(opened.name, std::string("tiny-recommended"));
        QCOMPARE(opened.arms.size(), size_t(1));  // fp32 is both
        QCOMPARE(opened.seeds.size(), size_t(3));
    }

    void anAdviceTrainedFromTheTabShowsItsProgressThenItsAnswer() {
        test::Workspace ws;
        QVERIFY(ws.open());
        ws.window->editor()->setSpec(tinyModel());
        ws.window->show();
        ws.window->showAdvice();
        AdviceView* view = ws.window->advice();
        QVERIFY2(view->sourceLabel()->text().contains("batch 4"),
                 qPrintable(view->sourceLabel()->text()));
        TrainingWorker* worker = ws.window->training()->worker();
        QSignalSpy progress(worker, &TrainingWorker::adviceProgress);
        QSignalSpy finished(worker, &TrainingWorker::adviceFinished);
        QSignalSpy shown(view, &AdviceView::shown);
        view->adviseButton()->click();
        QVERIFY(!view->adviseButton()->isEnabled());
        QVERIFY(view->progressBar()->isVisible());
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, kTrainTimeoutMs);
        QCOMPARE(finished[0][1].toInt(), static_cast<int>(train::AdviseEnd::Advised));
        QVERIFY(progress.count() >= 4);
        bool timing = false, quality = false;
        for (const auto& p : progress) {
            timing = timing || p[0].toString() == "timing";
            quality = quality || p[0].toString() == "quality check";
        }
        QVERIFY(timing && quality);
        QTRY_COMPARE(shown.count(), 1);
        QVERIFY(!view->progressBar()->isVisible());
        QVERIFY(view->adviseButton()->isEnabled());
        QVERIFY(view->table()->rowCount() >= 4);
        QVERIFY(view->advice().quality_checked);
        QVERIFY(view->advice().recommendation() != nullptr);
        QVERIFY2(view->recommendationLabel()->text().contains("Recommendation"),
                 qPrintable(view->recommendationLabel()->text()));
    }
};

QTEST_MAIN(AdviceTest)
#include "test_ui_advice.moc"
