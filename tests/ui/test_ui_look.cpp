// How the workbench's views read: the verdict's table and plots on a dark palette, its
// words kept whole in a narrow panel; the history's id column, which tells apart two
// experiments of one name.
#include <qcustomplot.h>
#include <QApplication>
#include <QHeaderView>
#include <QTabWidget>
#include <QTableWidget>
#include <QTextBrowser>
#include <QTreeView>
#include <QtTest>
#include <algorithm>

#include "UiTestSupport.h"
#include "core/analysis/ExperimentAnalysis.h"
#include "core/store/Database.h"
#include "ui/ColorScheme.h"
#include "ui/data/StoreSession.h"
#include "ui/runs/HistoryView.h"
#include "ui/runs/RunTreeModel.h"
#include "ui/runs/VerdictPanel.h"

using namespace ampbench;
using namespace ampbench::ui;

namespace {

analysis::ExperimentAnalysis twoArms() {
    analysis::ExperimentAnalysis a;
    a.experiment_id = 3;
    a.name = "look";
    a.baseline = "fp32";
    for (const char* arm : {"fp32", "amp-bf16"}) {
        analysis::ArmVerdict v;
        v.arm = arm;
        v.verdict = std::string(arm) == "fp32" ? analysis::Verdict::Baseline
                                               : analysis::Verdict::Inconclusive;
        a.verdicts.push_back(v);
    }
    return a;
}

}  // namespace

class LookTest : public QObject {
    Q_OBJECT
  private Q_SLOTS:
    void cleanup() { applyColorScheme(QStringLiteral("light")); }

    // On the dark palette the table's header band is dark too (it was white), and it
    // follows a change of palette while shown.
    void theVerdictTablesHeaderFollowsADarkPalette() {
        VerdictPanel panel;
        panel.setAnalysis(twoArms());
        QVERIFY2(panel.html().contains("#eef1f5", Qt::CaseInsensitive), qPrintable(panel.html()));
        applyColorScheme(QStringLiteral("dark"));
        QApplication::processEvents();
        panel.setPalette(QApplication::palette());
        QApplication::processEvents();
        const QString dark = panel.html();
        QVERIFY2(!dark.contains("#eef1f5", Qt::CaseInsensitive), qPrintable(dark));
        panel.setAnalysis(twoArms());
        QVERIFY(!panel.html().contains("#eef1f5", Qt::CaseInsensitive));
    }

    // On the dark palette the lines between the table's cells are quiet: drawn in a
    // lighter shade of the paper's light grey, they were white rules across the panel.
    void theVerdictTablesLinesAreQuietOnADarkPalette() {
        applyColorScheme(QStringLiteral("dark"));
        VerdictPanel panel;
        panel.setPalette(QApplication::palette());
        panel.resize(380, 400);
        panel.setAnalysis(twoArms());
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        auto* text = panel.findChild<QTextBrowser*>();
        QVERIFY(text);
        const QImage image = text->viewport()->grab().toImage();
        // A rule is a row of bright pixels across most of the width; text never is.
        int rules = 0;
        for (int y = 0; y < image.height(); ++y) {
            int bright = 0;
            for (int x = 0; x < image.width(); ++x) {
                bright += image.pixelColor(x, y).lightness() > 160 ? 1 : 0;
            }
            rules += bright > image.width() / 2 ? 1 : 0;
        }
        QCOMPARE(rules, 0);
    }

    // On the dark palette the verdict's plots are dark too: drawn for paper, they were a
    // white block in the dark panel. Back on the light palette they are light again.
    void theVerdictsPlotsFollowTheColours() {
        VerdictPanel panel;
        panel.resize(380, 400);
        panel.setAnalysis(twoArms());
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        const auto lightness = [&panel](QCustomPlot* plot) {
            panel.tabs()->setCurrentWidget(plot);
            plot->replot();
            const QImage image = plot->grab().toImage();
            qint64 sum = 0;
            for (int y = 0; y < image.height(); ++y) {
                for (int x = 0; x < image.width(); ++x) {
                    sum += image.pixelColor(x, y).lightness();
                }
            }
            return sum / std::max<qint64>(1, qint64(image.width()) * image.height());
        };
        for (const char* scheme : {"dark", "light"}) {
            applyColorScheme(QString::fromLatin1(scheme));
            panel.setPalette(QApplication::palette());
            QApplication::processEvents();
            const bool dark = QByteArray(scheme) == "dark";
            for (QCustomPlot* plot : {panel.deviationPlot(), panel.validationPlot()}) {
                const qint64 l = lightness(plot);
                QVERIFY2(dark ? l < 100 : l > 155,
                         qPrintable(QStringLiteral("%1 on %2: mean lightness %3")
                                        .arg(plot->objectName(), QString::fromLatin1(scheme))
                                        .arg(l)));
            }
        }
    }

    // A narrow panel breaks lines between words, never inside "inconclusive".
    void theVerdictBreaksLinesBetweenWordsOnly() {
        VerdictPanel panel;
        panel.setAnalysis(twoArms());
        auto* text = panel.findChild<QTextBrowser*>();
        QVERIFY(text);
        QCOMPARE(text->wordWrapMode(), QTextOption::WordWrap);
    }

    // The colours switched to dark with a row selected: the details' section headings
    // ("Experiment", "Arms") take the dark palette at once, as a reselection did (they
    // stayed white, under the palette's white text).
    void theHistorysSectionHeadingsFollowAChangeOfColours() {
        test::Workspace ws;
        QVERIFY(ws.open());
        {
            auto db = store::Database::open(ws.dbPath().toStdString());
            const int64_t e = db->createExperiment("colours", "{}");
            db->createRun(e, "fp32", 0, 1, "{}", 10);
        }
        ws.window->session()->pollNow();
        HistoryView* history = ws.window->history();
        ws.window->tabs()->setCurrentWidget(history);
        ws.window->show();
        QVERIFY(QTest::qWaitForWindowExposed(ws.window.get()));
        history->tree()->setCurrentIndex(history->tree()->model()->index(0, 0));
        QTableWidget* details = history->details();
        QTRY_VERIFY(details->rowCount() > 0);
        auto sections = [details] {
            QList<QTableWidgetItem*> out;
            for (int r = 0; r < details->rowCount(); ++r) {
                if (details->columnSpan(r, 0) == 2) {
                    out << details->item(r, 0);
                }
            }
            return out;
        };
        QVERIFY(!sections().isEmpty());
        applyColorScheme(QStringLiteral("dark"));
        QTRY_VERIFY(details->palette().color(QPalette::Base).lightness() < 100);
        for (QTableWidgetItem* heading : sections()) {
            const QColor ground = heading->background().style() == Qt::NoBrush
                                      ? details->palette().color(QPalette::Base)
                                      : heading->background().color();
            const QColor text = heading->foreground().style() == Qt::NoBrush
                                    ? details->palette().color(QPalette::Text)
                                    : heading->foreground().color();
            QVERIFY2(std::abs(ground.lightness() - text.lightness()) > 100,
                     qPrintable(QStringLiteral("\"%1\": text %2 on %3")
                                    .arg(heading->text(), text.name(), ground.name())));
        }
    }

    // Two experiments of one name: the History shows each one's id beside its name.
    void theHistoryShowsEachExperimentsId() {
        test::Workspace ws;
        QVERIFY(ws.open());
        {
            auto db = store::Database::open(ws.dbPath().toStdString());
            for (int i = 0; i < 2; ++i) {
                const int64_t e = db->createExperiment("same name", "{}");
                db->createRun(e, "fp32", 0, 1, "{}", 10);
            }
        }
        ws.window->session()->pollNow();
        QTreeView* tree = ws.window->history()->tree();
        QVERIFY(!tree->isColumnHidden(RunTreeModel::IdColumn));
        QCOMPARE(tree->header()->visualIndex(RunTreeModel::IdColumn), 1);  // beside the name
        QCOMPARE(tree->model()->headerData(RunTreeModel::IdColumn, Qt::Horizontal).toString(),
                 QStringLiteral("Id"));
        QStringList ids;
        for (int r = 0; r < tree->model()->rowCount(); ++r) {
            ids << tree->model()->index(r, RunTreeModel::IdColumn).data().toString();
        }
        ids.sort();
        QCOMPARE(ids, (QStringList{QStringLiteral("#1"), QStringLiteral("#2")}));
        const QModelIndex first = tree->model()->index(0, 0);
        QCOMPARE(tree->model()->index(0, RunTreeModel::IdColumn, first).data().toString().left(1),
                 QStringLiteral("#"));
    }
};

QTEST_MAIN(LookTest)
#include "test_ui_look.moc"
