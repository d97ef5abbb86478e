// Plot behaviour over rows in the store: x-axis modes, smoothing, log-y, the shared
// legend, redraw coalescing, labels across experiments; and the pure series functions
// the plots use. Figures and colours: test_ui_plot_figures.cpp.

#include <QtTest>

#include "PlotsTestSupport.h"
#include "core/run/FusedGroup.h"

using namespace ampbench;
using namespace ampbench::ui;
using namespace ampbench::ui::plots_test;

class PlotsTest : public QObject {
    Q_OBJECT
  private Q_SLOTS:
    void newestExperimentIsShownOnOpen() {
        Filled f;
        QVERIFY(f.window->openDatabase(f.dbPath()));  // reopen: ticks the newest experiment
        QTRY_COMPARE(f.window->cache()->runs(), QList<qint64>{f.runs[3]});
    }

    // On a laptop's screen the window fits and the panels go to two columns rather
    // than be squeezed; on a wide one they are three again.
    void theWindowAndItsPanelsFitALaptopScreen() {
        Filled f;
        f.show({f.runs[0], f.runs[1]});
        QVERIFY2(
            f.window->minimumSizeHint().width() <= 1024,
            qPrintable(
                QStringLiteral("the window needs %1 px").arg(f.window->minimumSizeHint().width())));
        f.window->tabs()->setCurrentWidget(f.window->compare());
        f.window->show();
        QVERIFY(QTest::qWaitForWindowExposed(f.window.get()));
        for (const QSize size : {QSize(1024, 700), QSize(1280, 720), QSize(1900, 1000)}) {
            f.window->resize(size);
            QTRY_COMPARE(f.window->width(), size.width());
            const int legend = f.plots()->legend()->isVisible() ? f.plots()->legend()->width() : 0;
            const int expected =
                f.plots()->width() - legend >= PlotsView::kColumns * PlotsView::kReadableWidth
                    ? PlotsView::kColumns
                    : 2;
            QTRY_COMPARE(f.plots()->columns(), expected);
            for (int i = 0; i < PlotsView::kPanels; ++i) {
                if (f.plots()->isPanelShown(i)) {
                    QVERIFY(f.plots()->panel(i)->width() >= f.plots()->panel(i)->minimumWidth());
                }
            }
        }
        QCOMPARE(f.plots()->columns(), PlotsView::kColumns);  // 1900 px
    }

    // With nothing ticked (an empty database too) the plots say where to go.
    void nothingTickedSaysWhereRunsComeFrom() {
        Filled f;
        auto* hint = f.plots()->findChild<QLabel*>("plotsEmptyHint");
        QVERIFY(hint);
        f.show({});
        QVERIFY(!hint->isHidden());
        QVERIFY(hint->text().contains(QStringLiteral("Experiment tab")));
        f.show({f.runs[0]});
        QVERIFY(hint->isHidden());
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
        QCOMPARE(draw::seedShade(draw::armColor(0), 0, 1), draw::armColor(0));
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

        // Reset view (the button, or any panel's menu) resets them all.
        Q_EMIT memory->viewResetByUser();
        for (PlotPanel* p : {loss, stepTime, memory}) {
            QVERIFY(!p->userView());
            QCOMPARE(p->xAxis->range(), full);
        }
    }

    void aDoubleClickMaximisesAPanelAndAnotherRestores() {
        Filled f;
        f.show({f.runs[0], f.runs[1]});
        PlotPanel* memory = f.plots()->memoryPlot();
        memory->setViewport(QRect(0, 0, 600, 400));
        memory->replot();
        const QPoint at = memory->axisRect()->center();
        QMouseEvent twice(QEvent::MouseButtonDblClick, at, memory->mapToGlobal(at), Qt::LeftButton,
                          Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(memory, &twice);
        QCOMPARE(f.plots()->maximised(), 3);
        QVERIFY(f.plots()->isPanelShown(3));
        for (int i : {0, 1, 2, 4, 5}) {
            QVERIFY(!f.plots()->isPanelShown(i));
        }
        QApplication::sendEvent(memory, &twice);
        QCOMPARE(f.plots()->maximised(), -1);
        QVERIFY(f.plots()->isPanelShown(0));
    }

    // A double click as the window system sends it (press, release, double click,
    // release) maximises a panel and another restores the grid exactly as it was: every
    // panel in its place, at its range, still following the runs. The click's press
    // once counted as a zoom, and the grid took the range of the evaluations' panel.
    void restoringAMaximisedPanelGivesBackTheGridAsItWas() {
        Filled f;
        f.show({f.runs[0], f.runs[1]});
        f.window->tabs()->setCurrentWidget(f.window->compare());
        f.window->resize(1024, 700);
        f.window->show();
        QVERIFY(QTest::qWaitForWindowExposed(f.window.get()));
        PlotsView* plots = f.plots();
        plots->redrawNow();
        QList<QRect> places;
        QList<QCPRange> ranges;
        QList<bool> shown;
        for (int i = 0; i < PlotsView::kPanels; ++i) {
            places << plots->panel(i)->geometry();
            ranges << plots->panel(i)->xAxis->range();
            shown << plots->isPanelShown(i);
        }
        QVERIFY(shown[0] && shown[1]);  // training loss, and validation over less of the x range
        PlotPanel* loss = plots->lossPlot();
        auto doubleClick = [](PlotPanel* p) {
            const QPoint at = p->axisRect()->center();
            const QPoint global = p->mapToGlobal(at);
            for (auto [type, buttons] : {std::pair{QEvent::MouseButtonPress, Qt::LeftButton},
                                         {QEvent::MouseButtonRelease, Qt::NoButton},
                                         {QEvent::MouseButtonDblClick, Qt::LeftButton},
                                         {QEvent::MouseButtonRelease, Qt::NoButton}}) {
                QMouseEvent e(type, at, global, Qt::LeftButton, buttons, Qt::NoModifier);
                QApplication::sendEvent(p, &e);
            }
        };
        doubleClick(loss);
        QCOMPARE(plots->maximised(), 0);
        QTRY_VERIFY(loss->width() > places[0].width());
        plots->redrawNow();
        QVERIFY(!loss->userView());
        doubleClick(loss);
        QCOMPARE(plots->maximised(), -1);
        QTRY_COMPARE(loss->geometry(), places[0]);
        plots->redrawNow();
        for (int i = 0; i < PlotsView::kPanels; ++i) {
            const QString name = plots->panel(i)->objectName();
            QCOMPARE(plots->isPanelShown(i), shown[i]);
            QVERIFY2(!plots->panel(i)->userView(), qPrintable(name));
            QVERIFY2(plots->panel(i)->xAxis->range() == ranges[i],
                     qPrintable(QStringLiteral("%1: %2 to %3, was %4 to %5")
                                    .arg(name)
                                    .arg(plots->panel(i)->xAxis->range().lower)
                                    .arg(plots->panel(i)->xAxis->range().upper)
                                    .arg(ranges[i].lower)
                                    .arg(ranges[i].upper)));
            if (shown[i]) {
                QCOMPARE(plots->panel(i)->geometry(), places[i]);
            }
        }
    }

    void eachPanelShowsTheMetricChosenForIt() {
        Filled f;
        f.show({f.runs[0], f.runs[1]});
        f.plots()->setPanelMetric(5, PlotMetric::LearningRate);
        QVERIFY(f.plots()->drawnMetric(5) == PlotMetric::LearningRate);
        QCOMPARE(f.plots()->panel(5)->curves().size(), 2);
        QCOMPARE(f.plots()->panel(5)->title(), QString("Learning rate"));
        QCOMPARE(f.settings->plotPanelMetrics().value(5), QString("lr"));
        // The choice outlives the window.
        f.settings->sync();
        Settings again(f.dir.filePath("settings.ini"));
        PlotsView other(*f.window->cache(), again);
        QVERIFY(other.panelMetric(5) == PlotMetric::LearningRate);
        // Back from a line plot to the bars: arm names on the x-axis again.
        f.plots()->setPanelMetric(5, PlotMetric::ArmBars);
        QVERIFY(!f.plots()->panel(5)->xAxis->ticker().dynamicCast<QCPAxisTickerText>().isNull());
    }

    void panelsWithNothingToShowLeaveTheGrid() {
        auto rows = steps(20, 64, 10.0);
        for (auto& row : rows) {
            row.loss_scale = 1.0;  // bf16: no scaler
            row.skipped = false;
        }
        OneRun ws("amp", rows);
        PlotsView* plots = ws.plots();
        plots->redrawNow();
        QVERIFY(!plots->isPanelShown(4));  // loss scale
        QVERIFY(!plots->isPanelShown(1));  // validation: no evaluation
        QVERIFY(plots->isPanelShown(0));
        QVERIFY(plots->isPanelShown(3));
    }

    void accumulationArmsCompareTimePerSample() {
        Filled f;
        f.show({f.runs[0], f.runs[1]});
        QVERIFY(f.plots()->drawnMetric(2) == PlotMetric::StepTime);
        f.show({f.runs[0], f.runs[2]});  // K = 1 and K = 4
        QVERIFY(f.plots()->drawnMetric(2) == PlotMetric::TimePerSample);
        const auto& curves = f.plots()->stepTimePlot()->curves();
        QCOMPARE(curves[0]->data()->at(5)->value, 20.0 / 64);
        QCOMPARE(curves[1]->data()->at(5)->value, 50.0 / 256);
    }

    void validationIsTheMeanOfTheSeedsWithABand() {
        Filled f;
        f.show({f.runs[0], f.runs[1], f.runs[2]});
        PlotPanel* validation = f.plots()->validationPlot();
        QVERIFY(f.plots()->drawnMetric(1) == PlotMetric::ValidationAccuracy);
        QCOMPARE(validation->curves().size(), 2);  // one per arm
        QCOMPARE(validation->curves()[0]->name(), QString("fp32 mean of 2"));
        QCOMPARE(validation->curves()[0]->data()->at(0)->value, 60.0);
        QVERIFY(!validation->yAxis2->visible());
        QVERIFY(validation->graphCount() >= 4);  // fp32: mean and band edges; amp-k4: mean
    }

    void anArmKeepsItsColourWhateverElseIsOnShow() {
        Filled f;
        f.show({f.runs[2]});
        const QColor alone = f.plots()->lossPlot()->curves()[0]->pen().color();
        QCOMPARE(alone, draw::armColor(1));  // the spec's second arm
        f.show({f.runs[0], f.runs[2]});
        QCOMPARE(f.plots()->lossPlot()->curves()[1]->pen().color(), alone);
        // A second experiment's runs draw dashed.
        f.show({f.runs[0], f.runs[3]});
        QVERIFY(f.plots()->lossPlot()->curves()[1]->pen().style() == Qt::DashLine);
    }

    void memoryDrawsThePeakTheSummaryGives() {
        Filled f;
        f.show({f.runs[2]});
        PlotPanel* memory = f.plots()->memoryPlot();
        QVERIFY(memory->wholeLabel(memory->yAxis).contains("peak dashed"));
        QCOMPARE(memory->graphCount(), 2);
        const auto* peak = memory->graph(1);
        QCOMPARE((peak->data()->constEnd() - 1)->value, 256.0);  // MiB, as summarised
        QCOMPARE(f.window->cache()->series(f.runs[2])->summary.peak_mem, int64_t(256) << 20);
    }

    // A data-parallel run: the step-time curve is rank 0's, and two dotted lines span
    // the ranks' median step times that rank 0 recorded at the end.
    void aDataParallelRunShowsItsRanksStepTimeSpread() {
        test::Workspace w;
        w.open();
        auto db = store::Database::open(w.dbPath().toStdString());
        const int64_t e = db->createExperiment("dp", "{}");
        const int64_t run = db->createRun(
            e, "dp2", 0, 1, R"({"name":"dp2","ranks":2,"world_size":2,"backend":"gloo"})", 20);
        db->insertSteps(run, steps(20, 64, 4.0));
        db->insertEvents(run, {{20, run::EventKind::Info, "rank 0: median step 4.00 ms", 4.0},
                               {20, run::EventKind::Info, "rank 1: median step 5.00 ms", 5.0}});
        db->finishRun(run, run::RunStatus::Finished, "");
        w.window->session()->pollNow();
        w.window->runModel()->setCheckedRuns({run});
        QTRY_VERIFY(w.window->cache()->series(run) &&
                    !w.window->cache()->series(run)->ranks.empty());
        w.window->compare()->plots()->redrawNow();
        PlotPanel* stepTime = w.window->compare()->plots()->stepTimePlot();
        QList<double> levels;
        for (int i = 0; i < stepTime->graphCount(); ++i) {
            const auto* g = stepTime->graph(i);
            if (g->pen().style() == Qt::DotLine && g->data()->size() == 2) {
                levels << g->data()->constBegin()->value;
            }
        }
        std::sort(levels.begin(), levels.end());
        QCOMPARE(levels, (QList<double>{4.0, 5.0}));
    }

    // A member of three fused seeds recorded the fused step (which trained all three
    // runs' samples): its time per sample is its share, as the summary's dashed median.
    void aFusedMembersTimePerSampleIsItsShareOfTheFusedStep() {
        test::Workspace w;
        w.open();
        auto db = store::Database::open(w.dbPath().toStdString());
        const int64_t e = db->createExperiment("fused", "{}");
        const int64_t alone = db->createRun(e, "amp-k4", 1, 1, "{}", 10);
        db->insertSteps(alone, steps(10, 256, 40.0));  // K = 4: time per sample compares
        db->finishRun(alone, run::RunStatus::Finished, "");
        const int64_t fused = db->createRun(e, "fp32", 0, 1, "{}", 40);
        db->insertEvents(fused, {run::fusedSeedsEvent({1, 2, 3})});
        db->insertSteps(fused, steps(40, 64, 30.0));
        db->finishRun(fused, run::RunStatus::Finished, "");
        w.window->session()->pollNow();
        w.window->runModel()->setCheckedRuns({fused, alone});
        QTRY_VERIFY(w.window->cache()->series(fused) &&
                    w.window->cache()->series(fused)->fused_group == 3);
        PlotsView* plots = w.window->compare()->plots();
        plots->redrawNow();
        QVERIFY(plots->drawnMetric(2) == PlotMetric::TimePerSample);
        bool found = false;
        for (const QCPGraph* g : plots->stepTimePlot()->curves()) {
            if (g->name().contains("fp32")) {
                QCOMPARE(g->data()->at(5)->value, 30.0 / 64 / 3);
                found = true;
            }
        }
        QVERIFY(found);
        // Its memory too: its share of the group's 64 MiB, as the summary gives it.
        PlotPanel* memory = plots->memoryPlot();
        found = false;
        for (const QCPGraph* g : memory->curves()) {
            if (g->name().contains("fp32")) {
                QCOMPARE((g->data()->constEnd() - 1)->value, 64.0 / 3);
                found = true;
            }
        }
        QVERIFY(found);
        QCOMPARE(w.window->cache()->series(fused)->summary.peak_mem, (int64_t(64) << 20) / 3);
    }

    void theLegendBesideThePlotsHidesRuns() {
        Filled f;
        f.show({f.runs[0], f.runs[1], f.runs[2]});
        PlotLegend* legend = f.plots()->legend();
        QCOMPARE(legend->topLevelItemCount(), 2);
        QTreeWidgetItem* fp32 = legend->topLevelItem(0);
        QCOMPARE(fp32->text(0), QString("fp32"));
        QCOMPARE(fp32->childCount(), 2);
        fp32->child(1)->setCheckState(0, Qt::Unchecked);
        QVERIFY(!f.plots()->lossPlot()->curves()[1]->visible());
        QVERIFY(!f.plots()->memoryPlot()->curves()[1]->visible());
        fp32->setCheckState(0, Qt::Unchecked);  // the arm: every seed
        QVERIFY(!f.plots()->lossPlot()->curves()[0]->visible());
        fp32->setCheckState(0, Qt::Checked);
        QVERIFY(f.plots()->lossPlot()->curves()[0]->visible());
        QVERIFY(f.plots()->lossPlot()->curves()[1]->visible());
    }

    // A narrow panel puts fewer ticks on its x-axis rather than let their labels
    // run into each other.
    void xTickLabelsOfANarrowPanelDoNotOverlap() {
        PlotPanel panel(QStringLiteral("Training loss"));
        QFont big = panel.font();
        big.setPointSizeF(big.pointSizeF() + 3);  // a desktop with a larger font
        panel.xAxis->setTickLabelFont(big);
        panel.resize(PlotPanel::kMinimumWidth, PlotPanel::kMinimumHeight);
        QCPGraph* g = panel.addCurve(QStringLiteral("fp32"), Qt::blue);
        panel.setCurve(g, makeCurve({1000, 250000, 500000}, {1.0, 2.0, 3.0}));
        panel.resetView();
        panel.replot();
        panel.replot();  // the second sees the labels the first drew
        const QFontMetrics metrics(big);
        int sum = 0;
        for (const QString& label : panel.xAxis->tickVectorLabels()) {
            sum +=
                metrics.horizontalAdvance(label) + metrics.horizontalAdvance(QStringLiteral(" "));
        }
        QVERIFY(panel.xAxis->tickVectorLabels().size() >= 2);
        QVERIFY2(sum <= panel.axisRect()->width(),
                 qPrintable(QStringLiteral("%1 px of labels on %2 px: %3")
                                .arg(sum)
                                .arg(panel.axisRect()->width())
                                .arg(panel.xAxis->tickVectorLabels().join(' '))));
    }

    void longCurvesAreCutToThePixelsWithSpikesKept() {
        auto rows = steps(50000, 64, 20.0);
        rows[31337].step_ms = 900.0;  // one slow step among 50,000
        OneRun ws("fp32", rows);
        PlotsView* plots = ws.plots();
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
        QVERIFY(redrawn.wait(kUiPatienceMs));
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
        // The one-pass columns hold what each metric's own pass reads.
        for (auto axis : {XAxis::Step, XAxis::Samples, XAxis::WallSeconds}) {
            const analysis::StepColumns c = analysis::stepColumns(s, axis);
            QCOMPARE(c.x, analysis::stepXs(s, axis));
            QCOMPARE(c.skipped, analysis::skippedIndices(s));
            for (size_t m = 0; m < analysis::kStepMetrics; ++m) {
                const auto metric = static_cast<analysis::StepMetric>(m);
                const auto one = analysis::stepValues(s, metric);
                QCOMPARE(c.of(metric).size(), one.size());
                for (size_t i = 0; i < one.size(); ++i) {
                    QVERIFY(c.of(metric)[i] == one[i] ||
                            (std::isnan(one[i]) && std::isnan(c.of(metric)[i])));
                }
            }
        }
        s[1].step_ms = 8.0;  // step 2 of 32 samples a step: 64 samples seen
        QCOMPARE(analysis::stepValues(s, analysis::StepMetric::MsPerSample)[1], 8.0 / 32);
        QCOMPARE(analysis::smoothingWeight(0), 0.0);
        QCOMPARE(analysis::smoothingWeight(100), 0.99);
        QCOMPARE(analysis::smoothingWeight(500), 0.99);
    }
};

QTEST_MAIN(PlotsTest)
#include "test_ui_plots.moc"
