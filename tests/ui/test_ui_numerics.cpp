// The per-layer numerics heatmap: tensors × steps, coloured by the chosen metric,
// a cell's numbers on hover, the worst layers below, and a line when there is none.
#include <qcustomplot.h>
#include <QComboBox>
#include <QFontMetrics>
#include <QLabel>
#include <QSignalSpy>
#include <QTableView>
#include <QTreeView>
#include <QTreeWidget>
#include <QTreeWidgetItemIterator>
#include <QtTest>
#include <cmath>

#include "UiTestSupport.h"
#include "core/store/NumericsStore.h"
#include "ui/MainWindow.h"
#include "ui/data/StoreSession.h"
#include "ui/editor/ArmsTableModel.h"
#include "ui/editor/ExperimentEditor.h"
#include "ui/editor/SetupPanel.h"
#include "ui/plots/NumericsHeatmap.h"
#include "ui/report/ReportHtml.h"
#include "ui/report/ReportPlots.h"
#include "ui/runs/HistoryView.h"

using namespace ampbench;
using namespace ampbench::ui;

namespace {

run::NumericsRecord row(int64_t step, const std::string& name, double sub, double headroom,
                        run::NumericsKind kind = run::NumericsKind::Grad) {
    run::NumericsRecord r;
    r.step = step;
    r.kind = kind;
    r.name = name;
    r.underflow_subnormal = sub;
    r.underflow_normal = sub * 2;
    r.headroom_log2 = headroom;
    r.absmax = 65504.0 / std::exp2(headroom);
    r.numel = 100;
    r.loss_scale = 65536;
    r.dtype = kind == run::NumericsKind::Grad ? "float32" : "float16";
    return r;
}

/// A tensor an FP8 layer cast at `step` with per-tensor scale `scale`.
run::NumericsRecord castRow(int64_t step, const std::string& name, double scale,
                            double saturated = 0.0) {
    auto r = row(step, name, 0.0, 1.0, run::NumericsKind::Cast);
    r.format = name.find(":grad_output") != std::string::npos ? "e5m2" : "e4m3";
    r.scale = scale;
    r.saturated = saturated;
    return r;
}

}  // namespace

class NumericsHeatmapTest : public QObject {
    Q_OBJECT
  private Q_SLOTS:
    void showsTensorsBySteps() {
        NumericsHeatmap map;
        map.resize(800, 400);
        map.show();
        QVERIFY(QTest::qWaitForWindowExposed(&map));
        map.setRows({row(10, "head.weight", 0.10, 12.0), row(20, "head.weight", 0.30, 9.0),
                     row(10, "blocks.0", 0.0, 2.5, run::NumericsKind::Activation),
                     row(20, "blocks.0", 0.0, -INFINITY, run::NumericsKind::Activation)});
        QCOMPARE(map.grid().names.size(), size_t(2));
        QCOMPARE(map.grid().steps.size(), size_t(2));
        QVERIFY(map.plot()->isVisible());
        // Underflow by default: head.weight (row 0) at step 20 (column 1).
        QCOMPARE(map.cellValue(0, 1), 0.30);
        // Headroom: non-finite drawn at the low end of the scale.
        map.setMetric(analysis::NumericsMetric::Headroom);
        QCOMPARE(map.findChild<QComboBox*>("numericsMetric")->currentIndex(), 2);
        QCOMPARE(map.cellValue(1, 1), -1.0);
        QCOMPARE(map.cellValue(1, 0), 2.5);
        // Hover: the cell under the point gives its numbers.
        map.plot()->replot();
        const QPoint cell(map.plot()->xAxis->coordToPixel(1), map.plot()->yAxis->coordToPixel(0));
        const QString text = map.textAt(cell);
        QVERIFY2(text.contains("head.weight (grad), step 20"), qPrintable(text));
        QVERIFY2(text.contains("fp16: < 2^-24 30.00%"), qPrintable(text));
        QVERIFY(map.textAt(QPoint(-50, -50)).isEmpty());
        // The worst layers below.
        QVERIFY2(map.worstText().contains("blocks.0 (output)"), qPrintable(map.worstText()));
        QVERIFY2(map.worstText().contains("none (non-finite)"), qPrintable(map.worstText()));
    }

    // History shows the selected run's heatmap, and hides it for an experiment.
    void historyShowsTheSelectedRunsNumerics() {
        test::Workspace w;
        QVERIFY(w.open());
        w.window->show();
        auto writer = store::Database::open(w.dbPath().toStdString());
        const int64_t e = writer->createExperiment("numerics", "{}");
        const int64_t r = writer->createRun(e, "amp", 0, 1, "{}", 10);
        store::NumericsStore(*writer).insert(r, {row(5, "head.weight", 0.25, 8.0)});
        w.window->session()->pollNow();
        HistoryView* history = w.window->history();
        QTreeView* tree = history->tree();
        const QModelIndex parent = tree->model()->index(0, 0);
        tree->setCurrentIndex(parent);
        QTRY_COMPARE(history->selected(), qMakePair(qint64(e), false));
        QTRY_VERIFY(history->numerics()->isHidden());
        tree->expand(parent);
        tree->setCurrentIndex(tree->model()->index(0, 0, parent));
        QTRY_COMPARE(history->selected(), qMakePair(qint64(r), true));
        QTRY_VERIFY(!history->numerics()->isHidden());  // its tab need not be on show
        QTRY_COMPARE(history->numerics()->grid().names.size(), size_t(1));
        QCOMPARE(history->numerics()->cellValue(0, 0), 0.25);
    }

    // A run with FP8 casts shows each role's scales over the steps it recorded, the
    // saturated tensor named; a run without casts hides the plot.
    void historyShowsTheScaleHistoryOnlyForARunWithCasts() {
        test::Workspace w;
        QVERIFY(w.open());
        w.window->show();
        auto writer = store::Database::open(w.dbPath().toStdString());
        const int64_t e = writer->createExperiment("scales", "{}");
        const int64_t fp8 = writer->createRun(e, "fp8", 0, 1, "{}", 40);
        const int64_t amp = writer->createRun(e, "amp", 1, 1, "{}", 40);
        std::vector<run::NumericsRecord> casts;
        // 20 layers, three casts each: 60 tensors at 4 steps.
        for (int64_t step : {10, 20, 30, 40}) {
            for (int layer = 0; layer < 20; ++layer) {
                const std::string name = "blocks." + std::to_string(layer) + ".qkv:";
                casts.push_back(castRow(step, name + "input", std::exp2(layer % 4)));
                casts.push_back(castRow(step, name + "weight", std::exp2(-2 - layer % 3)));
                casts.push_back(castRow(step, name + "grad_output", std::exp2(10 + step / 10),
                                        layer == 7 && step >= 30 ? 0.05 : 0.0));
            }
        }
        store::NumericsStore(*writer).insert(fp8, casts);
        store::NumericsStore(*writer).insert(amp, {row(10, "head.weight", 0.1, 8.0)});
        w.window->session()->pollNow();
        HistoryView* history = w.window->history();
        QTreeView* tree = history->tree();
        const QModelIndex parent = tree->model()->index(0, 0);
        tree->expand(parent);
        auto select = [&](int64_t run) {
            for (int i = 0; i < tree->model()->rowCount(parent); ++i) {
                tree->setCurrentIndex(tree->model()->index(i, 0, parent));
                if (history->selected() == qMakePair(qint64(run), true)) {
                    return true;
                }
            }
            return false;
        };
        QTRY_VERIFY(select(fp8));
        NumericsHeatmap* view = history->numerics();
        QTRY_VERIFY(!view->isHidden());
        QTRY_COMPARE(view->scales().curves.size(), size_t(60));
        QCustomPlot* plot = view->scalePlot();
        QVERIFY(!plot->isHidden());
        QCOMPARE(view->scales().steps, (std::vector<int64_t>{10, 20, 30, 40}));
        QCOMPARE(view->scales().bands.size(), size_t(3));  // input, weight, grad_output
        // Each role's median over every step; the band's least and largest scales.
        int medians = 0;
        QString legend;
        for (int i = 0; i < plot->graphCount(); ++i) {
            QCPGraph* g = plot->graph(i);
            if (g->name().contains("median")) {
                ++medians;
                QCOMPARE(g->data()->size(), 4);
            }
            legend += g->name() + "\n";
        }
        QCOMPARE(medians, 3);
        const auto& input = view->scales().bands[0];
        QCOMPARE(input.min[0], 0.0);
        QCOMPARE(input.max[0], 3.0);
        QCOMPARE(input.median[0], 1.5);
        // The one tensor that saturated is drawn and named, its steps marked.
        QCOMPARE(view->scales().saturated.size(), size_t(1));
        QVERIFY2(legend.contains("blocks.7.qkv:grad_output (e5m2), saturated up to 5.00%"),
                 qPrintable(legend));
        QVERIFY2(legend.contains("grad_output: median, band least\u2013largest (20 tensors)"),
                 qPrintable(legend));
        // Hovering names the step's numbers, the ends of the bands by tensor.
        plot->replot();
        const QPoint at(plot->xAxis->coordToPixel(31), plot->yAxis->coordToPixel(5));
        const QString text = view->scaleTextAt(at);
        QVERIFY2(text.startsWith("step 30: scale"), qPrintable(text));
        QVERIFY2(text.contains("input (20 tensors): median 2^1.50, least 2^0"), qPrintable(text));
        QVERIFY2(text.contains("saturated: blocks.7.qkv:grad_output (e5m2) 5.00% at scale 2^13"),
                 qPrintable(text));
        // A run without casts: its heatmap, no scale plot.
        QTRY_VERIFY(select(amp));
        QTRY_COMPARE(view->grid().names.size(), size_t(1));
        QVERIFY(view->scales().empty());
        QVERIFY(plot->isHidden());
        QVERIFY(view->scaleTextAt(at).isEmpty());
    }

    // The report: each arm's first run with numerics gets the two heatmaps, shown with
    // that run's tables in the Per-layer numerics section and not among the plots.
    void reportShowsEachArmsHeatmaps() {
        test::Workspace w;
        QVERIFY(w.open());
        auto db = store::Database::open(w.dbPath().toStdString());
        const int64_t e = db->createExperiment("numerics", "{}");
        const int64_t first = db->createRun(e, "amp", 0, 1, "{}", 10);
        const int64_t second = db->createRun(e, "amp", 0, 2, "{}", 10);
        const int64_t plain = db->createRun(e, "fp32", 1, 1, "{}", 10);
        store::NumericsStore(*db).insert(
            first, {row(5, "head.weight", 0.25, 8.0), row(10, "head.weight", 0.5, 6.0)});
        store::NumericsStore(*db).insert(second, {row(5, "head.weight", 0.1, 9.0)});
        auto cast = row(5, "blocks.0.qkv:input", 0.0, 0.5, run::NumericsKind::Cast);
        cast.format = "e4m3";
        cast.saturated = 0.125;
        cast.scale = 0.25;
        store::NumericsStore(*db).insert(first, {cast});
        auto content = report::prepareReport(*db, e);
        QVERIFY(content);
        content->plots = report::renderPlots(*content);
        std::vector<QString> ids;
        for (const auto& p : content->plots) {
            if (p.id.startsWith("numerics-")) {
                ids.push_back(p.id);
                QVERIFY(!p.image.isNull());
            }
        }
        // The amp arm's first run only (fp32 recorded none): its heatmaps, and its cast's
        // scale history.
        QCOMPARE(ids.size(), size_t(3));
        QCOMPARE(ids[0],
                 report::numericsPlotId(first, analysis::NumericsMetric::UnderflowSubnormal));
        QCOMPARE(ids[1], report::numericsPlotId(first, analysis::NumericsMetric::Headroom));
        QCOMPARE(ids[2], report::scalesPlotId(first));
        const std::string html = report::reportHtml(*content, report::ImageMode::Embedded);
        const size_t section = html.find("<h2>Per-layer numerics</h2>");
        const size_t plots = html.find(">Plots</h2>");
        const size_t image = html.find(
            "alt=\"amp, seed 1: headroom to fp16's largest, 65504 / e4m3's largest, 448\"");
        QVERIFY(section != std::string::npos && plots != std::string::npos);
        QVERIFY2(image != std::string::npos && image > section && image < plots,
                 "the heatmap sits in the numerics section");
        QCOMPARE(html.find("alt=\"amp, seed 2:"), std::string::npos);
        // Its cast tensor with its format, scale and saturated share; the headroom
        // table names each row's format.
        QVERIFY(html.find("FP8 cast") != std::string::npos);
        QVERIFY(html.find("<td>e4m3</td>") != std::string::npos);
        QVERIFY(html.find("12.50%") != std::string::npos);
        QVERIFY(html.find("e4m3's largest, 448") != std::string::npos);
        QVERIFY(html.find("fp16's largest, 65504") != std::string::npos);
        (void)plain;
    }

    // The editor's module tree: a double-click makes the module an FP32 island of the
    // selected arm, added once.
    void editorPicksIslandsFromTheModuleTree() {
        config::ExperimentSpec spec = test::tinySpec();
        spec.model.name = "mlp";
        spec.model.depth = 1;
        spec.data.name = "synthetic-images";
        spec.data.channels = 1;
        spec.data.height = spec.data.width = 8;
        spec.data.classes = 4;
        config::ArmSpec fp32, amp;
        fp32.name = "fp32";
        amp.name = "amp";
        amp.precision = config::Precision::Amp;
        spec.arms = {fp32, amp};
        ExperimentEditor editor;
        QSignalSpy checked(&editor, &ExperimentEditor::setupChecked);
        editor.setSpec(spec);
        QVERIFY(checked.wait(20000));
        QTRY_VERIFY_WITH_TIMEOUT(!editor.checking(), kUiPatienceMs);
        QTreeWidget* tree = editor.setupPanel()->moduleTree();
        QTreeWidgetItem* head = nullptr;
        for (QTreeWidgetItemIterator it(tree); *it; ++it) {
            if ((*it)->data(0, Qt::UserRole).toString() == "layers.3") {
                head = *it;
            }
        }
        QVERIFY(head);
        auto* view = editor.findChild<QTableView*>("arms");
        view->selectRow(1);
        Q_EMIT tree->itemDoubleClicked(head, 0);
        Q_EMIT tree->itemDoubleClicked(head, 0);  // once is enough
        const int column = ArmsTableModel::columnOf("fp32_modules");
        QCOMPARE(editor.armsModel()->index(1, column).data(Qt::EditRole).toString(),
                 QString("layers.3"));
        QCOMPARE(editor.armsModel()->index(0, column).data(Qt::EditRole).toString(), QString());
    }

    // Hundreds of tensors: only as many names as fit, more when the plot grows.
    void namesOnlyAsManyTensorsAsFit() {
        NumericsHeatmap map;
        map.resize(800, 400);
        map.show();
        QVERIFY(QTest::qWaitForWindowExposed(&map));
        std::vector<run::NumericsRecord> rows;
        for (int t = 0; t < 240; ++t) {
            rows.push_back(row(1, "blocks." + std::to_string(t) + ".weight", 0.0, 10.0));
        }
        map.setRows(rows);
        QCOMPARE(map.grid().names.size(), size_t(240));
        const int small = map.rowsLabelledEvery();
        QVERIFY2(small > 1, "240 names cannot all fit in 400 pixels");
        const int line = QFontMetrics(map.plot()->yAxis->tickLabelFont()).height();
        QVERIFY2(240 / small * line <= map.plot()->height(), "the names shown overlap");
        map.resize(800, 1600);
        QTRY_VERIFY(map.rowsLabelledEvery() < small);
        map.setRows({row(1, "head.weight", 0.0, 10.0)});
        QCOMPARE(map.rowsLabelledEvery(), 1);
    }

    // The metric menu names the formats of the rows shown, never a fixed 65504, and has
    // the saturated share; an FP8 arm's cast tensors show with their format.
    void metricsNameTheFormatsPresentAndSaturation() {
        NumericsHeatmap map;
        map.resize(800, 400);
        map.show();
        QVERIFY(QTest::qWaitForWindowExposed(&map));
        QVERIFY2(
            map.metricText(analysis::NumericsMetric::Headroom).contains("fp16's largest, 65504"),
            qPrintable(map.metricText(analysis::NumericsMetric::Headroom)));
        auto grad = row(10, "head.weight", 0.0, 120.0);
        grad.format = "bf16";
        auto cast = row(10, "blocks.0.qkv:input", 0.01, 0.5, run::NumericsKind::Cast);
        cast.format = "e4m3";
        cast.saturated = 0.125;
        cast.scale = 0.5;
        map.setRows({grad, cast});
        const QString headroom = map.metricText(analysis::NumericsMetric::Headroom);
        QVERIFY2(headroom.contains("bf16's largest") && headroom.contains("e4m3's largest, 448"),
                 qPrintable(headroom));
        QVERIFY2(!headroom.contains("65504"), qPrintable(headroom));
        QVERIFY2(map.metricText(analysis::NumericsMetric::UnderflowSubnormal).contains("2^-9"),
                 qPrintable(map.metricText(analysis::NumericsMetric::UnderflowSubnormal)));
        auto* box = map.findChild<QComboBox*>("numericsMetric");
        QCOMPARE(box->count(), 4);
        box->setCurrentIndex(static_cast<int>(analysis::NumericsMetric::Saturated));
        QCOMPARE(map.metric(), analysis::NumericsMetric::Saturated);
        QCOMPARE(map.grid().names[1], std::string("blocks.0.qkv:input (cast)"));
        QCOMPARE(map.cellValue(1, 0), 0.125);
        QVERIFY2(map.worstText().contains("e4m3"), qPrintable(map.worstText()));
        QVERIFY2(map.worstText().contains("12.50%"), qPrintable(map.worstText()));
    }

    // Long tensor names are elided in the middle to a third of the plot, so labels leave
    // the cells their room and never overlap; hovering a label gives the whole name.
    void longNamesAreElidedWithTheWholeNameOnHover() {
        NumericsHeatmap map;
        map.resize(700, 400);
        map.show();
        QVERIFY(QTest::qWaitForWindowExposed(&map));
        const std::string long_name =
            "encoder.layers.11.self_attention.query_key_value_projection.weight";
        std::vector<run::NumericsRecord> rows = {row(1, long_name, 0.1, 10.0),
                                                 row(1, "head.weight", 0.0, 12.0)};
        map.setRows(rows);
        map.plot()->replot();
        const QString shown = map.rowLabel(0);
        const QString whole = QString::fromStdString(long_name + " (grad)");
        QVERIFY2(shown != whole && shown.contains(QChar(0x2026)), qPrintable(shown));
        QVERIFY2(shown.startsWith("encoder.") && shown.endsWith("(grad)"), qPrintable(shown));
        const QFontMetrics metrics(map.plot()->yAxis->tickLabelFont());
        QVERIFY(metrics.horizontalAdvance(shown) <= map.plot()->width() / 3);
        QCOMPARE(map.rowLabel(1), QString("head.weight (grad)"));  // short names stay whole
        // The cells keep two thirds of the plot.
        QVERIFY2(map.plot()->axisRect()->width() >= map.plot()->width() / 2,
                 qPrintable(QString::number(map.plot()->axisRect()->width())));
        const QPoint label(map.plot()->axisRect()->left() / 2, map.plot()->yAxis->coordToPixel(0));
        QCOMPARE(map.labelAt(label), whole);
        QVERIFY(map.textAt(label).isEmpty());
        QVERIFY(map.labelAt(QPoint(map.plot()->axisRect()->center())).isEmpty());
    }

    void saysHowToRecordWhenThereIsNothing() {
        NumericsHeatmap map;
        map.show();
        QVERIFY(QTest::qWaitForWindowExposed(&map));
        map.setRows({});
        QVERIFY(!map.plot()->isVisible());
        bool said = false;
        for (auto* label : map.findChildren<QLabel*>()) {
            said = said || (label->isVisible() && label->text().contains("numerics_every"));
        }
        QVERIFY(said);
    }
};

QTEST_MAIN(NumericsHeatmapTest)
#include "test_ui_numerics.moc"
