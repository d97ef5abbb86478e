// Plots as figures and in colour: a panel exported as PNG, SVG and PDF at the size asked,
// as a figure of the curves on show with its title and labels whole, and the screen as
// it was; the plots and icons in a dark palette.

#include <QtTest>

#include "PlotsTestSupport.h"

using namespace ampbench;
using namespace ampbench::ui;
using namespace ampbench::ui::plots_test;

class PlotFiguresTest : public QObject {
    Q_OBJECT

  private Q_SLOTS:
    void aPlotExportsAsPngSvgAndPdfAtTheSizeAsked() {
        Filled f;
        f.show({f.runs[0], f.runs[2]});
        PlotPanel* loss = f.plots()->lossPlot();
        QTemporaryDir dir;
        QString error;
        QVERIFY2(exportPlotImage(*loss, dir.filePath("loss.png"), 800, 500, &error),
                 qPrintable(error));
        QCOMPARE(QImage(dir.filePath("loss.png")).size(), QSize(800, 500));
        QVERIFY(exportPlotImage(*loss, dir.filePath("loss.svg"), 800, 500, &error));
        QFile svg(dir.filePath("loss.svg"));
        QVERIFY(svg.open(QIODevice::ReadOnly));
        const QByteArray text = svg.readAll();
        QVERIFY(text.contains("<svg"));
        QVERIFY(text.contains("training loss"));
        QVERIFY(exportPlotImage(*loss, dir.filePath("loss.pdf"), 800, 500, &error));
        QFile pdf(dir.filePath("loss.pdf"));
        QVERIFY(pdf.open(QIODevice::ReadOnly));
        QVERIFY(pdf.read(4) == "%PDF");
        QVERIFY(!exportPlotImage(*loss, dir.filePath("loss.bmp"), 800, 500, &error));
        QVERIFY(error.contains(".png, .svg or .pdf"));
        QVERIFY(!exportPlotImage(*loss, dir.filePath("huge.png"), 800, 90000, &error));
        QVERIFY(!QFile::exists(dir.filePath("huge.png")));
    }

    void anExportedPlotIsAFigureAndTheScreenStaysAsItWas() {
        Filled f;
        f.show({f.runs[0], f.runs[1], f.runs[2]});
        PlotPanel* loss = f.plots()->lossPlot();
        loss->resize(640, 400);
        loss->setTitleNote(QStringLiteral("(auto)"));  // as when the chosen metric has no data
        loss->replot();
        QCOMPARE(loss->curves().size(), 3);
        // The pointer rests on a point of the first curve: the hover ring shows.
        QCPGraph* first = loss->curves()[0];
        const auto point = first->data()->at(first->dataCount() / 2);
        const QPointF at = first->coordsToPixels(point->key, point->value);
        QMouseEvent move(QEvent::MouseMove, at, loss->mapToGlobal(at), Qt::NoButton, Qt::NoButton,
                         Qt::NoModifier);
        QCoreApplication::sendEvent(loss, &move);
        QCPItemTracer* tracer = nullptr;
        for (int i = 0; i < loss->itemCount(); ++i) {
            tracer = tracer ? tracer : qobject_cast<QCPItemTracer*>(loss->item(i));
        }
        QVERIFY(tracer);
        QVERIFY(tracer->visible());
        auto* title = qobject_cast<QCPTextElement*>(loss->plotLayout()->element(0, 0));
        QVERIFY(title);
        const QString screenTitle = title->text();
        QVERIFY(screenTitle.contains("(auto)"));
        QVERIFY(screenTitle.contains(QStringLiteral("\u25be")));
        QVERIFY(!loss->legend->visible());  // on screen the legend beside the panels names them
        const int rows = loss->plotLayout()->rowCount();
        const int legendEntries = loss->legend->itemCount();
        const QImage screen = loss->toPixmap().toImage();

        QTemporaryDir dir;
        QString error;
        QVERIFY2(exportPlotImage(*loss, dir.filePath("loss.svg"), 900, 560, &error),
                 qPrintable(error));
        QVERIFY2(exportPlotImage(*loss, dir.filePath("loss.png"), 900, 560, &error),
                 qPrintable(error));
        QCOMPARE(QImage(dir.filePath("loss.png")).size(), QSize(900, 560));
        QFile svgFile(dir.filePath("loss.svg"));
        QVERIFY(svgFile.open(QIODevice::ReadOnly));
        const QString svg = QString::fromUtf8(svgFile.readAll());
        for (QCPGraph* curve : loss->curves()) {
            QVERIFY2(svg.contains(curve->name().toHtmlEscaped()), qPrintable(curve->name()));
        }
        QVERIFY(svg.contains(">" + loss->title() + "<"));  // the title alone
        QVERIFY(!svg.contains(QStringLiteral("\u25be")));
        QVERIFY(!svg.contains("(auto)"));
        // The axes' whole labels, though the screen cuts a long one to its axis.
        QVERIFY(svg.contains(loss->wholeLabel(loss->xAxis)));
        QVERIFY2(svg.contains(loss->wholeLabel(loss->yAxis).toHtmlEscaped()),
                 qPrintable(loss->wholeLabel(loss->yAxis)));

        // The screen is as it was: title with its marks, no legend, the hover ring.
        QCOMPARE(title->text(), screenTitle);
        QVERIFY(!loss->legend->visible());
        QCOMPARE(loss->legend->itemCount(), legendEntries);
        QCOMPARE(loss->plotLayout()->rowCount(), rows);
        QVERIFY(tracer->visible());
        QCOMPARE(loss->toPixmap().toImage(), screen);
    }

    void anExportedFigureNamesOnlyTheCurvesOnShow() {
        Filled f;
        f.show({f.runs[0], f.runs[1], f.runs[2]});
        PlotPanel* loss = f.plots()->lossPlot();
        const QString hidden = loss->curves()[1]->name();
        f.plots()->setRunHidden(hidden, true);
        QVERIFY(!loss->curves()[1]->visible());
        QTemporaryDir dir;
        QString error;
        QVERIFY2(exportPlotImage(*loss, dir.filePath("loss.svg"), 800, 500, &error),
                 qPrintable(error));
        QFile svgFile(dir.filePath("loss.svg"));
        QVERIFY(svgFile.open(QIODevice::ReadOnly));
        const QString svg = QString::fromUtf8(svgFile.readAll());
        QVERIFY(svg.contains(loss->curves()[0]->name().toHtmlEscaped()));
        QVERIFY(!svg.contains(hidden.toHtmlEscaped()));
        // The hidden curve keeps its greyed entry in the panel's own legend.
        QCPAbstractLegendItem* entry = loss->legend->itemWithPlottable(loss->curves()[1]);
        QVERIFY(entry);
        QCOMPARE(qobject_cast<QCPPlottableLegendItem*>(entry)->textColor(), QColor(Qt::gray));
    }

    // A panel narrower than its title or shorter than its axis label cuts them with an
    // ellipsis rather than at its edge; a figure of it carries them whole.
    void aNarrowPanelCutsItsTitleAndLabelsAndItsFigureShowsThemWhole() {
        PlotPanel panel(QStringLiteral("Throughput and peak memory per arm, every seed"));
        panel.setTitleMenu(true);
        panel.setTitleNote(QStringLiteral("(auto)"));
        panel.resize(PlotPanel::kMinimumWidth, PlotPanel::kMinimumHeight);
        const QString label = QStringLiteral("MiB resident: after each step, peak dashed");
        panel.yAxis->setLabel(label);
        QCPGraph* g = panel.addCurve(QStringLiteral("fp32"), Qt::blue);
        panel.setCurve(g, makeCurve({1, 2, 3}, {1.0, 2.0, 3.0}));
        panel.resetView();
        panel.replot();
        const QString title = panel.screenTitle();
        QVERIFY2(title.contains(QChar(0x2026)) && title.endsWith(QStringLiteral("\u25be")),
                 qPrintable(title));
        QFont bold = panel.font();
        bold.setBold(true);
        QVERIFY(QFontMetrics(bold).horizontalAdvance(title) <= panel.width());
        QVERIFY2(panel.yAxis->label().contains(QChar(0x2026)), qPrintable(panel.yAxis->label()));
        QVERIFY(QFontMetrics(panel.yAxis->labelFont()).horizontalAdvance(panel.yAxis->label()) <=
                panel.axisRect()->height());
        QCOMPARE(panel.wholeLabel(panel.yAxis), label);

        QTemporaryDir dir;
        QString error;
        QVERIFY2(exportPlotImage(panel, dir.filePath("bars.svg"), 900, 600, &error),
                 qPrintable(error));
        QFile svgFile(dir.filePath("bars.svg"));
        QVERIFY(svgFile.open(QIODevice::ReadOnly));
        const QString svg = QString::fromUtf8(svgFile.readAll());
        QVERIFY(svg.contains(">" + panel.title() + "<"));
        QVERIFY(svg.contains(label));
        QVERIFY(!svg.contains(QChar(0x2026)));
        // The screen cuts them again.
        QCOMPARE(panel.screenTitle(), title);
        QVERIFY(panel.yAxis->label().contains(QChar(0x2026)));
        // Wide enough: whole.
        panel.resize(900, 600);
        panel.replot();
        QVERIFY(!panel.screenTitle().contains(QChar(0x2026)));
        QCOMPARE(panel.yAxis->label(), label);
    }

    void aPanelWithItsOwnLegendGetsItBackAfterExport() {
        PlotPanel panel(QStringLiteral("Gradient norm"));
        panel.resize(500, 320);
        for (int c = 0; c < 2; ++c) {
            QCPGraph* g = panel.addCurve(QStringLiteral("arm %1").arg(c), c ? Qt::red : Qt::blue);
            panel.setCurve(g, makeCurve({1, 2, 3}, {1.0 + c, 2.0, 3.0 - c}));
        }
        panel.setHidden(QStringLiteral("arm 1"), true);
        panel.resetView();
        panel.replot();  // laid out now: the curves are cut for its width, as on screen
        QVERIFY(panel.legend->visible());  // a panel on its own keeps the legend over the plot
        const QPen border = panel.legend->borderPen();
        const QImage screen = panel.toPixmap().toImage();
        QTemporaryDir dir;
        QString error;
        QVERIFY2(exportPlotImage(panel, dir.filePath("norm.svg"), 700, 400, &error),
                 qPrintable(error));
        QCOMPARE(panel.legend->layout(), panel.axisRect()->insetLayout());
        QCOMPARE(panel.legend->itemCount(), 2);
        QCOMPARE(panel.legend->borderPen(), border);
        QCOMPARE(panel.plotLayout()->rowCount(), 2);  // title and plot
        QCOMPARE(panel.toPixmap().toImage(), screen);
    }

    void plotsFollowADarkPalette() {
        Filled f;
        f.show({f.runs[0]});
        QPalette dark;
        dark.setColor(QPalette::Base, QColor(30, 30, 30));
        dark.setColor(QPalette::Window, QColor(45, 45, 45));
        dark.setColor(QPalette::Text, QColor(230, 230, 230));
        dark.setColor(QPalette::WindowText, QColor(230, 230, 230));
        f.plots()->setPalette(dark);
        PlotPanel* loss = f.plots()->lossPlot();
        QTRY_VERIFY(loss->xAxis->tickLabelColor().lightness() > 200);
        QCOMPARE(loss->axisRect()->backgroundBrush().color(), QColor(30, 30, 30));
    }

    // View › Colours › Dark: the window, the plots and the toolbar's icons (the style's
    // black ones vanished on a dark palette) follow, and the choice is kept.
    void theDarkColoursOfTheViewMenuReachIconsAndPlotsAndAreKept() {
        const QPalette desktop = QApplication::palette();
        {
            Filled f;
            f.show({f.runs[0]});
            QAction* dark = f.window->colorSchemeAction("dark");
            QVERIFY(dark);
            dark->trigger();
            QVERIFY(QApplication::palette().color(QPalette::Window).lightness() < 100);
            QCOMPARE(f.settings->colorScheme(), QStringLiteral("dark"));
            QTRY_VERIFY(f.plots()->lossPlot()->axisRect()->backgroundBrush().color().lightness() <
                        100);
            const QImage icon = f.window->runAction()->icon().pixmap(24).toImage();
            int light = 0;
            for (int y = 0; y < icon.height(); ++y) {
                for (int x = 0; x < icon.width(); ++x) {
                    const QColor c = icon.pixelColor(x, y);
                    light += c.alpha() > 200 && c.lightness() > 180;
                }
            }
            QVERIFY2(light > 20, qPrintable(QString::number(light)));
            // A new window with these settings starts dark.
            f.window = std::make_unique<MainWindow>(*f.settings);
            QVERIFY(f.window->colorSchemeAction("dark")->isChecked());
            f.window->colorSchemeAction("system")->trigger();
            QCOMPARE(QApplication::palette().color(QPalette::Window),
                     desktop.color(QPalette::Window));
            QCOMPARE(f.settings->colorScheme(), QStringLiteral("system"));
        }
    }
};

QTEST_MAIN(PlotFiguresTest)
#include "test_ui_plot_figures.moc"
