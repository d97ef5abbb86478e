// The window on a laptop's screen: at 1280×720 and 1024×700 every tab lays out
// within the window, no widget is squeezed below its minimum, no wrapped label is
// shorter than its lines, no two widgets side by side overlap, plot titles are
// whole, and the verdict's text wraps at word boundaries only.
#include <QAbstractTextDocumentLayout>
#include <QCheckBox>
#include <QComboBox>
#include <QLabel>
#include <QLayout>
#include <QScrollArea>
#include <QSortFilterProxyModel>
#include <QSpinBox>
#include <QSplitter>
#include <QStatusBar>
#include <QStyleOptionButton>
#include <QStyleOptionComboBox>
#include <QTabWidget>
#include <QTableWidget>
#include <QTextBlock>
#include <QTextBrowser>
#include <QTextLayout>
#include <QTreeView>
#include <QtTest>

#include "UiTestSupport.h"
#include "core/store/Database.h"
#include "ui/ColorScheme.h"
#include "ui/ElidingComboBox.h"
#include "ui/data/RunDataCache.h"
#include "ui/data/StoreSession.h"
#include "ui/editor/ExperimentEditor.h"
#include "ui/editor/SetupPanel.h"
#include "ui/editor/SpecForm.h"
#include "ui/plots/PlotInput.h"
#include "ui/plots/PlotLegend.h"
#include "ui/plots/PlotPanel.h"
#include "ui/plots/PlotsView.h"
#include "ui/plots/TimingPlots.h"
#include "ui/runs/CompareView.h"
#include "ui/runs/RunTreeModel.h"
#include "ui/runs/VerdictPanel.h"

using namespace ampbench;
using namespace ampbench::ui;

namespace {

std::vector<run::StepRecord> steps(int64_t n, int64_t seed, double offset) {
    std::vector<run::StepRecord> out;
    for (int64_t s = 1; s <= n; ++s) {
        run::StepRecord r;
        r.step = s;
        r.samples = s * 64;
        r.loss = 2.0 / static_cast<double>(s) + offset + 0.01 * static_cast<double>(seed);
        r.step_ms = 10 + static_cast<double>(s % 3);
        r.wall_s = 0.01 * static_cast<double>(s);
        r.mem_allocated = r.mem_peak = int64_t{100} << 20;
        out.push_back(r);
    }
    return out;
}

/// Whether `layout` (or a layout inside it) places `widget`.
bool places(QLayout* layout, QWidget* widget) {
    for (int i = 0; layout && i < layout->count(); ++i) {
        QLayoutItem* item = layout->itemAt(i);
        if (item->widget() == widget || places(item->layout(), widget)) {
            return true;
        }
    }
    return false;
}

/// Widgets a layout or a splitter sizes (a widget's own parts, such as a combo box's
/// button or a view's scroll bars, are the widget's business).
bool laidOut(QWidget* w) {
    QWidget* parent = w->parentWidget();
    if (!parent) {
        return false;
    }
    if (auto* splitter = qobject_cast<QSplitter*>(parent)) {
        return splitter->indexOf(w) >= 0;
    }
    return places(parent->layout(), w);
}

/// The smallest size a layout may give `w` (Qt's rule: the minimum size if set, else
/// the minimum size hint where the policy lets it shrink, else the size hint).
QSize smallestSize(const QWidget* w) {
    const QSizePolicy policy = w->sizePolicy();
    const QSize hint = w->sizeHint();
    const QSize minHint = w->minimumSizeHint();
    QSize s(0, 0);
    if (policy.horizontalPolicy() != QSizePolicy::Ignored) {
        s.setWidth(policy.horizontalPolicy() & QSizePolicy::ShrinkFlag
                       ? minHint.width()
                       : std::max(hint.width(), minHint.width()));
    }
    if (policy.verticalPolicy() != QSizePolicy::Ignored) {
        s.setHeight(policy.verticalPolicy() & QSizePolicy::ShrinkFlag
                        ? minHint.height()
                        : std::max(hint.height(), minHint.height()));
    }
    if (w->minimumWidth() > 0) {
        s.setWidth(w->minimumWidth());
    }
    if (w->minimumHeight() > 0) {
        s.setHeight(w->minimumHeight());
    }
    return s.boundedTo(w->maximumSize());
}

QString describe(const QWidget* w) {
    QString name = QString::fromLatin1(w->metaObject()->className());
    if (!w->objectName().isEmpty()) {
        name += " \"" + w->objectName() + "\"";
    }
    for (const QWidget* p = w->parentWidget(); p; p = p->parentWidget()) {
        if (!p->objectName().isEmpty()) {
            return name + " in \"" + p->objectName() + "\"";
        }
    }
    return name;
}

/// Every laid-out visible widget under `root` at least its smallest size, every
/// wrapped label as tall as its lines at its width (its minimum size hint is one
/// line, so a layout short of room cut the rest), and none overlapping a visible
/// sibling; the problems found, one a line.
QStringList layoutProblems(QWidget* root) {
    QStringList problems;
    const QList<QWidget*> all = root->findChildren<QWidget*>();
    QHash<QWidget*, QList<QWidget*>> byParent;
    for (QWidget* w : all) {
        if (!w->isVisible() || w->isWindow() || !laidOut(w)) {
            continue;
        }
        const QSize smallest = smallestSize(w);
        if (w->width() < smallest.width() || w->height() < smallest.height()) {
            problems << QStringLiteral("%1 is %2×%3, below its minimum %4×%5")
                            .arg(describe(w))
                            .arg(w->width())
                            .arg(w->height())
                            .arg(smallest.width())
                            .arg(smallest.height());
        }
        auto* label = qobject_cast<QLabel*>(w);
        if (label && label->wordWrap() && !label->text().isEmpty() &&
            label->height() < label->heightForWidth(label->width())) {
            problems << QStringLiteral("%1 is %2 px tall, its lines need %3 at %4 px")
                            .arg(describe(w))
                            .arg(label->height())
                            .arg(label->heightForWidth(label->width()))
                            .arg(label->width());
        }
        byParent[w->parentWidget()].append(w);
    }
    for (const QList<QWidget*>& siblings : std::as_const(byParent)) {
        for (int i = 0; i < siblings.size(); ++i) {
            for (int j = i + 1; j < siblings.size(); ++j) {
                const QRect both = siblings[i]->geometry() & siblings[j]->geometry();
                if (!both.isEmpty()) {
                    problems << QStringLiteral("%1 and %2 overlap by %3×%4")
                                    .arg(describe(siblings[i]), describe(siblings[j]))
                                    .arg(both.width())
                                    .arg(both.height());
                }
            }
        }
    }
    return problems;
}

/// Lets posted layout requests run (a layout change can post another).
void settle() {
    for (int i = 0; i < 3; ++i) {
        QTest::qWait(20);
    }
}

/// The largest difference in lightness between a pixel of `area` and `around`.
int mostContrast(const QImage& image, const QRect& area, const QColor& around) {
    int most = 0;
    const QRect inside = area.intersected(image.rect());
    for (int y = inside.top(); y <= inside.bottom(); ++y) {
        for (int x = inside.left(); x <= inside.right(); ++x) {
            most =
                std::max(most, std::abs(image.pixelColor(x, y).lightness() - around.lightness()));
        }
    }
    return most;
}

/// Lines of the verdict's text that end inside a word (a word broken for lack of room).
QStringList brokenWords(QTextBrowser* browser) {
    QStringList out;
    QTextDocument* doc = browser->document();
    doc->documentLayout();  // laid out for the browser's width
    for (QTextBlock b = doc->begin(); b.isValid(); b = b.next()) {
        const QTextLayout* layout = b.layout();
        const QString text = b.text();
        for (int l = 0; layout && l + 1 < layout->lineCount(); ++l) {
            const QTextLine line = layout->lineAt(l);
            const int end = line.textStart() + line.textLength();
            const QChar last = end > 0 ? text.at(end - 1) : QChar(' ');
            if (!last.isSpace() && last != '-' && last != QChar(0x2013) && last != '/' &&
                last != QChar(0x200b)) {
                out << QStringLiteral("\"%1\" broken after \"%2\" (%3 px wide)")
                           .arg(text, text.left(end))
                           .arg(browser->viewport()->width());
            }
        }
    }
    return out;
}

/// The text a tree view draws for `index`: its display text as the style elides it to
/// the room the cell leaves after the indentation and the check box.
QString shownText(QTreeView* view, const QModelIndex& index) {
    QStyleOptionViewItem option;
    option.initFrom(view->viewport());
    option.rect = view->visualRect(index);
    option.font = view->font();
    option.features = QStyleOptionViewItem::HasDisplay;
    if (index.flags() & Qt::ItemIsUserCheckable) {
        option.features |= QStyleOptionViewItem::HasCheckIndicator;
    }
    option.text = index.data().toString();
    option.textElideMode = view->textElideMode();
    QStyle* style = view->style();
    const QRect text = style->subElementRect(QStyle::SE_ItemViewItemText, &option, view);
    const int margin = style->pixelMetric(QStyle::PM_FocusFrameHMargin, nullptr, view) + 1;
    return view->fontMetrics().elidedText(option.text, view->textElideMode(),
                                          text.width() - 2 * margin);
}

/// An experiment the verdict judges: fp32, amp and an accumulation arm with a
/// long hyphenated name, two seeds each, with evaluations.
struct Judged : test::Workspace {
    QList<qint64> runs;
    qint64 experiment = 0;
    Judged() {
        open();
        auto db = store::Database::open(dbPath().toStdString());
        experiment = db->createExperiment("fashion-mnist fp32 against amp and accumulation", "{}");
        int armIndex = 0;
        for (const char* arm : {"fp32", "amp", "amp-accum4-checkpointed"}) {
            for (int64_t seed : {1, 2}) {
                // 300 steps: "1800 / 1800" in the run list, as wide as real counts.
                const int64_t run = db->createRun(experiment, arm, armIndex, seed, "{}", 300);
                db->markRunning(run, "{}");
                db->insertSteps(run, steps(300, seed, 0.02 * armIndex));
                for (int64_t at : {150, 300}) {
                    run::EvalRecord e;
                    e.step = at;
                    e.samples = at * 64;
                    e.val_loss = 2.0 / static_cast<double>(at);
                    e.val_accuracy = (at == 150 ? 0.7 : 0.8) + 0.005 * static_cast<double>(seed);
                    db->insertEvals(run, {e});
                }
                db->finishRun(run, run::RunStatus::Finished, "");
                runs << run;
            }
            ++armIndex;
        }
        window->session()->pollNow();
    }
};

}  // namespace

class LayoutTest : public QObject {
    Q_OBJECT
  private Q_SLOTS:
    // Compare's bars per arm: a long arm name loses its middle to fit its column at the
    // panel's width as it is now, never running into its neighbour's label, and comes
    // back whole when the panel is wide enough.
    void longArmNamesUnderTheBarsFitTheirColumnsAtEveryWidth() {
        PlotPanel panel(QStringLiteral("Throughput and peak memory per arm"));
        PlotInput in;
        for (const char* arm : {"fp32-baseline-with-a-very-long-descriptive-name",
                                "bf16-autocast-with-an-even-longer-descriptive-name-x"}) {
            PlotGroup g;
            g.label = g.arm = QString::fromLatin1(arm);
            g.experiment = QStringLiteral("e");
            in.groups.push_back(g);
        }
        const QFontMetrics fm(panel.xAxis->tickLabelFont());
        auto check = [&](int width) {
            panel.resize(width, 300);
            panel.replot();
            const QStringList shown = panel.categoryTickLabels();
            if (shown.size() != 2) {
                return QStringLiteral("%1 labels").arg(shown.size());
            }
            // Centred under its bars: wider than the distance between two centres
            // runs into the next label.
            const int column =
                static_cast<int>(panel.xAxis->coordToPixel(1) - panel.xAxis->coordToPixel(0));
            for (int i = 0; i < 2; ++i) {
                if (fm.horizontalAdvance(shown[i]) > column) {
                    return QStringLiteral("'%1' is wider than its %2-pixel column at %3")
                        .arg(shown[i])
                        .arg(column)
                        .arg(width);
                }
                if (!shown[i].startsWith(in.groups[size_t(i)].arm.left(4)) ||
                    !shown[i].endsWith(in.groups[size_t(i)].arm.right(2))) {
                    return QStringLiteral("'%1' lost its start or end").arg(shown[i]);
                }
            }
            return QString();
        };
        panel.resize(1600, 300);  // drawn wide, then narrowed: fitted again
        drawArmBars(panel, in);
        for (int width : {1600, 500, 300, 900}) {
            const QString problem = check(width);
            QVERIFY2(problem.isEmpty(), qPrintable(problem));
        }
        panel.resize(1600, 300);
        panel.replot();
        QCOMPARE(panel.categoryTickLabels(),
                 (QStringList{in.groups[0].arm, in.groups[1].arm}));  // whole again
    }

    // View › Colours › dark: an unticked check box, in a form or a table's cell, stands
    // out from what is around it.
    void anUntickedCheckBoxIsVisibleOnTheDarkColours() {
        applyColorScheme(QStringLiteral("dark"));
        QCheckBox box(QStringLiteral("Deterministic"));
        box.resize(box.sizeHint());
        QStyleOptionButton option;
        option.initFrom(&box);
        const QRect indicator =
            box.style()->subElementRect(QStyle::SE_CheckBoxIndicator, &option, &box);
        const int boxContrast =
            mostContrast(box.grab().toImage(), indicator, box.palette().color(QPalette::Window));
        QTableWidget table(1, 1);
        auto* item = new QTableWidgetItem;
        item->setFlags(Qt::ItemIsEnabled | Qt::ItemIsUserCheckable);
        item->setCheckState(Qt::Unchecked);
        table.setItem(0, 0, item);
        table.resize(200, 100);
        table.show();
        QVERIFY(QTest::qWaitForWindowExposed(&table));
        const QRect cell = table.visualItemRect(item).adjusted(1, 1, -1, -1);
        const int cellContrast = mostContrast(table.viewport()->grab().toImage(), cell,
                                              table.palette().color(QPalette::Base));
        applyColorScheme(QStringLiteral("system"));
        QVERIFY2(boxContrast >= 60, qPrintable(QString::number(boxContrast)));
        QVERIFY2(cellContrast >= 60, qPrintable(QString::number(cellContrast)));
    }

    void everyTabLaysOutOnALaptopScreen() {
        Judged f;
        f.window->runModel()->setCheckedRuns(f.runs);
        CompareView* compare = f.window->compare();
        QTRY_COMPARE_WITH_TIMEOUT(compare->verdictExperiment(), f.experiment, kUiPatienceMs);
        f.window->show();
        QVERIFY(QTest::qWaitForWindowExposed(f.window.get()));
        // The model and data as checked, beside the problems: lines that wrap at 1024.
        QTRY_VERIFY_WITH_TIMEOUT(!f.window->editor()->setupPanel()->factsText().isEmpty(),
                                 kUiPatienceMs);
        for (const QSize size : {QSize(1280, 720), QSize(1024, 700)}) {
            f.window->resize(size);
            for (int tab = 0; tab < f.window->tabs()->count(); ++tab) {
                f.window->tabs()->setCurrentIndex(tab);
                // The window keeps the size asked: nothing in the tab needs more.
                QTRY_COMPARE(f.window->size(), size);
                compare->plots()->redrawNow();
                settle();
                const QStringList problems = layoutProblems(f.window.get());
                QVERIFY2(problems.isEmpty(), qPrintable(QStringLiteral("%1×%2, tab %3:\n%4")
                                                            .arg(size.width())
                                                            .arg(size.height())
                                                            .arg(f.window->tabs()->tabText(tab))
                                                            .arg(problems.join('\n'))));
            }
        }
    }

    // Two panels across and whole titles, a legend that names its runs, a verdict
    // whose words stay whole, at both sizes.
    void runsAndPlotsStayLegibleOnALaptopScreen() {
        Judged f;
        f.window->runModel()->setCheckedRuns(f.runs);
        CompareView* compare = f.window->compare();
        QTRY_COMPARE_WITH_TIMEOUT(compare->verdictExperiment(), f.experiment, kUiPatienceMs);
        f.window->tabs()->setCurrentWidget(compare);
        f.window->show();
        QVERIFY(QTest::qWaitForWindowExposed(f.window.get()));
        for (const QSize size : {QSize(1280, 720), QSize(1024, 700)}) {
            f.window->resize(size);
            QTRY_COMPARE(f.window->size(), size);
            PlotsView* plots = compare->plots();
            plots->redrawNow();
            settle();
            QVERIFY(plots->columns() >= 2);
            int whole = 0;
            for (int i = 0; i < PlotsView::kPanels; ++i) {
                PlotPanel* p = plots->panel(i);
                if (plots->isPanelShown(i) && p->title().size() < 24) {
                    QVERIFY2(!p->screenTitle().contains(QChar(0x2026)),
                             qPrintable(p->screenTitle()));
                    ++whole;
                }
            }
            QVERIFY(whole >= 4);
            // The legend: arm and seed labels whole.
            PlotLegend* legend = plots->legend();
            QVERIFY(legend->isVisible());
            QTreeWidgetItemIterator it(legend);
            for (; *it; ++it) {
                const QRect cell = legend->visualItemRect(*it);
                const int text = legend->fontMetrics().horizontalAdvance((*it)->text(0));
                // The check box and the colour swatch come before the text.
                QVERIFY2(cell.width() >= text + legend->iconSize().width() + 24,
                         qPrintable(QStringLiteral("%1 at %2 px wide needs %3")
                                        .arg((*it)->text(0))
                                        .arg(cell.width())
                                        .arg(text + legend->iconSize().width() + 24)));
            }
            // The verdict's plots, each on show: every legend entry as narrow as its plot
            // (the tolerance's ran past the panel's edge at 1024 pixels).
            auto* verdictTabs = compare->verdictPanel()->findChild<QTabWidget*>();
            QVERIFY(verdictTabs);
            for (QCustomPlot* plot : {compare->verdictPanel()->deviationPlot(),
                                      compare->verdictPanel()->validationPlot()}) {
                verdictTabs->setCurrentWidget(plot);
                settle();
                const int legend = plot->legend->minimumOuterSizeHint().width();
                QVERIFY2(!plot->legend->visible() || legend <= plot->width(),
                         qPrintable(QStringLiteral("%1: legend %2 px in a plot of %3 px")
                                        .arg(plot->objectName())
                                        .arg(legend)
                                        .arg(plot->width())));
            }
            verdictTabs->setCurrentIndex(0);
            settle();
            // The verdict: arm names on one line, no word broken in two.
            auto* text = compare->verdictPanel()->findChild<QTextBrowser*>();
            QVERIFY(text);
            const QStringList broken = brokenWords(text);
            QVERIFY2(broken.isEmpty(), qPrintable(broken.join('\n')));
            // The run list names the experiment, not "Exp".
            const int nameWidth = compare->picker()->columnWidth(RunTreeModel::NameColumn);
            QVERIFY2(nameWidth >= 100, qPrintable(QString::number(nameWidth)));
        }
    }

    // The form is what one edits: on a laptop screen it keeps the larger part of the
    // editor's height (the model's facts and module tree below it scroll instead; they
    // held it to a quarter, four rows a column, at 1024×700).
    void theFormKeepsRoomOnALaptopScreen() {
        Judged f;
        f.window->tabs()->setCurrentWidget(f.window->editor());
        f.window->show();
        QVERIFY(QTest::qWaitForWindowExposed(f.window.get()));
        QTRY_VERIFY_WITH_TIMEOUT(!f.window->editor()->setupPanel()->factsText().isEmpty(),
                                 kUiPatienceMs);
        QScrollArea* form = nullptr;
        for (auto* area : f.window->editor()->findChildren<QScrollArea*>()) {
            if (qobject_cast<SpecForm*>(area->widget())) {
                form = area;
            }
        }
        QVERIFY(form);
        for (const QSize size : {QSize(1280, 720), QSize(1024, 700)}) {
            f.window->resize(size);
            QTRY_COMPARE(f.window->size(), size);
            settle();
            const int editor = f.window->editor()->height();
            QVERIFY2(form->height() * 10 >= editor * 4,
                     qPrintable(QStringLiteral("%1×%2: the form %3 px of the editor's %4")
                                    .arg(size.width())
                                    .arg(size.height())
                                    .arg(form->height())
                                    .arg(editor)));
        }
    }

    // Splitters the user dragged are where they were left when the workbench starts
    // again: the editor's form made shorter for the problems below it, the run list
    // made wider than the third of the width it gets on a first start.
    void splittersStayWhereTheUserLeftThemAfterARestart() {
        Judged f;
        f.window->resize(1024, 700);
        f.window->show();
        QVERIFY(QTest::qWaitForWindowExposed(f.window.get()));
        auto* editor = f.window->findChild<QSplitter*>("editorSplit");
        QVERIFY(editor);
        const QList<int> before = editor->sizes();
        QCOMPARE(before.size(), 3);
        // Dragged all the way, the arms table keeps its minimum: it does not collapse.
        editor->setSizes({before[0] + before[1], 0, before[2]});
        QVERIFY2(editor->sizes()[1] > 0, "the arms table collapsed out of sight");
        editor->setSizes(before);
        QList<int> asked = before;
        asked[0] -= 40;
        asked[2] += 40;
        editor->setSizes(asked);
        const QList<int> dragged = editor->sizes();
        QVERIFY2(dragged != before, "the splitter took no new sizes");
        f.window->tabs()->setCurrentWidget(f.window->compare());
        auto* sides = f.window->findChild<QSplitter*>("runsSidesSplit");
        QVERIFY(sides);
        QTRY_VERIFY(sides->sizes().value(0) > 0);  // fitted on its first show
        const QList<int> fitted = sides->sizes();
        sides->setSizes({fitted[0] + 90, fitted[1] - 90});
        const QList<int> wider = sides->sizes();
        QVERIFY2(wider[0] > fitted[0], "the run list did not widen");
        f.window->close();

        MainWindow again(*f.settings);
        again.setMessageBoxesEnabled(false);
        again.show();
        QVERIFY(QTest::qWaitForWindowExposed(&again));
        QTRY_COMPARE(again.size(), QSize(1024, 700));
        auto* editorAgain = again.findChild<QSplitter*>("editorSplit");
        QTRY_COMPARE(editorAgain->sizes(), dragged);
        again.tabs()->setCurrentWidget(again.compare());
        auto* sidesAgain = again.findChild<QSplitter*>("runsSidesSplit");
        settle();
        QTRY_COMPARE(sidesAgain->sizes(), wider);
    }

    // The run list names each run by arm and seed and says its state, whole, at a
    // laptop's 1024 pixels and on a wide screen, with tags and several experiments
    // listed: "fp... 1" and "a...1" could not tell amp from amp-accum4.
    void theRunListShowsArmSeedAndStateWhole() {
        test::Workspace f;
        f.open();
        QList<qint64> runs;
        {
            auto db = store::Database::open(f.dbPath().toStdString());
            const int64_t older = db->createExperiment("fashion-mnist fp32 against amp", "{}");
            const int64_t newer =
                db->createExperiment("fashion-mnist amp against fp32 on the laptop", "{}");
            for (int64_t e : {older, newer}) {
                int armIndex = 0;
                for (const char* arm : {"fp32", "amp", "amp-accum4"}) {
                    for (int64_t seed : {1, 2}) {
                        const int64_t run = db->createRun(e, arm, armIndex, seed, "{}", 1800);
                        db->markRunning(run, "{}");
                        db->insertSteps(run, steps(1800, seed, 0.0));
                        db->finishRun(
                            run,
                            e == older ? run::RunStatus::Interrupted : run::RunStatus::Finished,
                            "");
                        runs << run;
                    }
                    ++armIndex;
                }
            }
            db->setExperimentTags(older, {"laptop", "baseline-recipe"});
            db->setRunTags(runs[1], {"keep"});
        }
        f.window->session()->pollNow();
        f.window->runModel()->setCheckedRuns(runs.mid(6));
        CompareView* compare = f.window->compare();
        QTreeView* picker = compare->picker();
        f.window->tabs()->setCurrentWidget(compare);
        f.window->resize(1920, 1080);  // as a window opened on a wide screen
        f.window->show();
        QVERIFY(QTest::qWaitForWindowExposed(f.window.get()));
        picker->expandAll();
        for (const QSize size : {QSize(1920, 1080), QSize(1024, 700)}) {
            f.window->resize(size);
            QTRY_COMPARE(f.window->size(), size);
            settle();
            QStringList cut;
            for (qint64 id : runs) {
                const QModelIndex source = f.window->runModel()->runItem(id)->index();
                const QModelIndex name =
                    static_cast<QSortFilterProxyModel*>(picker->model())->mapFromSource(source);
                const QString armSeed =
                    name.data().toString().section(QStringLiteral(" \u2014 "), 0, 0);
                const QString shown = shownText(picker, name);
                if (!shown.startsWith(armSeed)) {
                    cut << QStringLiteral("\"%1\" shown as \"%2\"").arg(armSeed, shown);
                }
                const QModelIndex status = name.siblingAtColumn(RunTreeModel::StatusColumn);
                if (picker->isColumnHidden(RunTreeModel::StatusColumn) ||
                    shownText(picker, status) != status.data().toString()) {
                    cut << QStringLiteral("status \"%1\" shown as \"%2\"")
                               .arg(status.data().toString(), shownText(picker, status));
                }
            }
            QVERIFY2(cut.isEmpty(), qPrintable(QStringLiteral("at %1 px: ").arg(size.width()) +
                                               cut.join(QStringLiteral("; "))));
            if (size.width() > 1900) {  // with a wide screen's room, the tags are listed too
                QVERIFY(!picker->isColumnHidden(RunTreeModel::TagsColumn));
            }
        }
    }

    // Text too long for its place wraps or ends in "…", never cut at an edge: the
    // Throughput panel's note at 1024×700 ("finished run on show"), the preset box
    // after an edit ("custom (edited from"), an error on the status bar (it ran into
    // the database's name).
    void textTooLongForItsPlaceWrapsOrEndsInAnEllipsis() {
        test::Workspace f;
        QVERIFY(f.open());
        QList<qint64> runs;
        {
            auto db = store::Database::open(f.dbPath().toStdString());
            const int64_t e = db->createExperiment("training", "{}");
            int armIndex = 0;
            for (const char* arm : {"fp32", "amp", "amp-accum4"}) {
                const int64_t run = db->createRun(e, arm, armIndex++, 1, "{}", 300);
                db->markRunning(run, "{}");
                db->insertSteps(run, steps(40, 1, 0.0));
                runs << run;
            }
        }
        // The preset box after an edit, on a window opened at 1024 px.
        ExperimentEditor* editor = f.window->editor();
        f.window->tabs()->setCurrentWidget(editor);
        f.window->resize(1024, 700);
        f.window->show();
        QVERIFY(QTest::qWaitForWindowExposed(f.window.get()));
        QTRY_COMPARE(f.window->size(), QSize(1024, 700));
        settle();
        QVERIFY(editor->loadPreset(QStringLiteral("fashion-mnist-recipe")));
        auto* batch = qobject_cast<QSpinBox*>(editor->fieldWidget("micro_batch"));
        QVERIFY(batch);
        batch->setValue(batch->value() + 1);  // an edit in the form
        settle();
        auto* preset = editor->findChild<QComboBox*>("preset");
        QVERIFY(preset);
        QVERIFY2(preset->currentText().startsWith(QStringLiteral("custom (edited from")),
                 qPrintable(preset->currentText()));
        QStyleOptionComboBox option;
        option.initFrom(preset);
        option.currentText = preset->currentText();
        const QRect field = preset->style()->subControlRect(QStyle::CC_ComboBox, &option,
                                                            QStyle::SC_ComboBoxEditField, preset);
        auto* eliding = qobject_cast<ElidingComboBox*>(preset);
        const QString drawn = eliding ? eliding->shownText() : preset->currentText();
        QVERIFY2(
            preset->fontMetrics().horizontalAdvance(drawn) <= field.width(),
            qPrintable(QStringLiteral("\"%1\" in a %2 px field").arg(drawn).arg(field.width())));
        QVERIFY2(drawn == preset->currentText() || drawn.endsWith(QChar(0x2026)),
                 qPrintable(drawn));
        QVERIFY(preset->toolTip().contains(preset->currentText()));

        // The Throughput panel's note, at 1024 px.
        f.window->session()->pollNow();
        f.window->runModel()->setCheckedRuns(runs);
        CompareView* compare = f.window->compare();
        f.window->tabs()->setCurrentWidget(compare);
        PlotsView* plots = compare->plots();
        QTRY_COMPARE(f.window->cache()->runs().size(), 3);
        plots->redrawNow();
        settle();
        plots->redrawNow();
        PlotPanel* bars = plots->armBarsPlot();
        QVERIFY(plots->isPanelShown(5));
        QCOMPARE(bars->message(), QStringLiteral("No finished run on show yet"));
        bars->replot();
        QStringList lines;
        for (int i = 0; i < bars->itemCount(); ++i) {
            auto* text = qobject_cast<QCPItemText*>(bars->item(i));
            if (text && text->visible()) {
                for (const QString& line : text->text().split('\n')) {
                    if (QFontMetrics(text->font()).horizontalAdvance(line) >
                        bars->axisRect()->width()) {
                        lines << line;
                    }
                }
            }
        }
        QVERIFY2(lines.isEmpty(),
                 qPrintable(
                     QStringLiteral("wider than the %1 px plot: ").arg(bars->axisRect()->width()) +
                     lines.join(QStringLiteral(" | "))));

        // An error on the status bar ends before the database's name, with room between.
        f.window->statusBar()->showMessage(
            QStringLiteral("Cannot open database: /a/long/path/to/a/file/that/is/not/a/database/"
                           "notes.db is not an SQLite database (its first bytes are not "
                           "\"SQLite format 3\"); it was left untouched"));
        auto* label = f.window->findChild<QLabel*>("databaseLabel");
        QVERIFY(label && label->isVisible());
        settle();
        const QImage bar = f.window->statusBar()->grab().toImage();
        const QColor ground = bar.pixelColor(1, bar.height() / 2);
        const QRect gap(label->x() - 10, 2, 10, bar.height() - 4);
        const int ink = mostContrast(bar, gap, ground);
        QVERIFY2(ink < 40, qPrintable(QStringLiteral("the message is drawn within 10 px of the "
                                                     "database's name (contrast %1)")
                                          .arg(ink)));
    }

    // The run list's Tags column shows while something is tagged, and takes no width
    // from the names otherwise.
    void theRunListShowsTagsOnlyWhenThereAreSome() {
        Judged f;
        QTreeView* picker = f.window->compare()->picker();
        QTRY_VERIFY(picker->isColumnHidden(RunTreeModel::TagsColumn));
        store::Database::open(f.dbPath().toStdString())
            ->setExperimentTags(f.experiment, {"laptop"});
        f.window->session()->pollNow();
        QTRY_VERIFY(!picker->isColumnHidden(RunTreeModel::TagsColumn));
        store::Database::open(f.dbPath().toStdString())->setExperimentTags(f.experiment, {});
        f.window->session()->pollNow();
        QTRY_VERIFY(picker->isColumnHidden(RunTreeModel::TagsColumn));
    }
};

QTEST_MAIN(LayoutTest)
#include "test_ui_layout.moc"
