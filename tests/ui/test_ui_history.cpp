// The History view's rename, label, tags and notes actions, through the dialogs the
// buttons open (answered by a timer) and through the methods the dialogs call; the
// trash (delete, undo, restore, empty); the details table; what an empty view says.
#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QFile>
#include <QFileInfo>
#include <QHeaderView>
#include <QInputDialog>
#include <QLabel>
#include <QListWidget>
#include <QProxyStyle>
#include <QPushButton>
#include <QSignalSpy>
#include <QStyleFactory>
#include <QStyleOptionHeader>
#include <QTabWidget>
#include <QTableWidget>
#include <QTimer>
#include <QTreeView>
#include <QtTest>

#include "UiTestSupport.h"
#include "core/store/Database.h"
#include "ui/EmptyViewNote.h"
#include "ui/data/StoreSession.h"
#include "ui/editor/ExperimentEditor.h"
#include "ui/runs/HistoryView.h"
#include "ui/runs/RunTreeModel.h"

using namespace ampbench;
using namespace ampbench::ui;

namespace {

/// Answers the next input dialog that opens: sets `text` and presses OK, or
/// presses Cancel. `shown` receives the text the dialog opened with.
void answerNextDialog(const QString& text, bool accept, QString* shown = nullptr) {
    auto* timer = new QTimer;
    timer->setInterval(10);
    QObject::connect(timer, &QTimer::timeout, [timer, text, accept, shown] {
        for (QWidget* w : QApplication::topLevelWidgets()) {
            auto* dialog = qobject_cast<QInputDialog*>(w);
            if (!dialog || !dialog->isVisible()) {
                continue;
            }
            timer->stop();
            timer->deleteLater();
            if (shown) {
                *shown = dialog->textValue();
            }
            if (accept) {
                dialog->setTextValue(text);
                dialog->accept();
            } else {
                dialog->reject();
            }
            return;
        }
    });
    timer->start();
}

/// Every action of the window that would write is off, its tooltip says `why`, and the
/// editor says that Run is off rather than "ready to run".
void expectNothingWrites(MainWindow& window, const QString& why) {
    QVERIFY(!window.runAction()->isEnabled());
    HistoryView* history = window.history();
    for (bool trash : {false, true}) {
        if (trash) {
            history->showTrash(true);  // the history's buttons as they were, then the trash's
        }
        for (const char* name : {"historyRename", "historyTags", "historyNotes", "historyDelete",
                                 "historyRestore", "historyEmptyTrash"}) {
            auto* button = window.findChild<QPushButton*>(name);
            QVERIFY2(button, name);
            if (button->isVisibleTo(history)) {  // the buttons of the view on show
                QVERIFY2(!button->isEnabled(), name);
            }
            QVERIFY2(button->toolTip().contains(why, Qt::CaseInsensitive),
                     qPrintable(QStringLiteral("%1: %2").arg(name, button->toolTip())));
        }
    }
    history->showTrash(false);
    QStringList lines;
    for (int i = 0; i < window.editor()->errorList()->count(); ++i) {
        lines << window.editor()->errorList()->item(i)->text();
    }
    const QString shown = lines.join('\n');
    QVERIFY2(!shown.contains(QStringLiteral("ready to run")), qPrintable(shown));
    QVERIFY2(shown.contains(why, Qt::CaseInsensitive), qPrintable(shown));
}

/// A workspace with one experiment "old-name" of one run, selected in History.
struct OneExperiment : test::Workspace {
    std::unique_ptr<store::Database> writer;
    int64_t experiment = 0;
    int64_t run = 0;
    HistoryView* history = nullptr;

    OneExperiment() {
        open();
        writer = store::Database::open(dbPath().toStdString());
        experiment = writer->createExperiment("old-name", "{}");
        run = writer->createRun(experiment, "fp32", 0, 1, "{}", 10);
        writer->setExperimentNotes(experiment, "first notes");
        window->session()->pollNow();
        history = window->history();
    }
    void selectExperiment() {
        QTreeView* tree = history->tree();
        tree->setCurrentIndex(tree->model()->index(0, 0));
        QCOMPARE(history->selected(), qMakePair(qint64(experiment), false));
        QCOMPARE(history->selectedExperiment(), qint64(experiment));
    }
    void selectRun() {
        QTreeView* tree = history->tree();
        const QModelIndex parent = tree->model()->index(0, 0);
        tree->expand(parent);
        tree->setCurrentIndex(tree->model()->index(0, 0, parent));
        QCOMPARE(history->selected(), qMakePair(qint64(run), true));
        QCOMPARE(history->selectedExperiment(), qint64(experiment));  // the run's
    }
    /// Ends the run (queued runs of a live process stay out of the trash).
    void finish() {
        writer->markRunning(run, "{}");
        writer->finishRun(run, run::RunStatus::Finished, "");
        window->session()->pollNow();
    }
    QPushButton* button(const char* name) const {
        return history->findChild<QPushButton*>(QString::fromLatin1(name));
    }
    QString nameInTree() const { return window->runModel()->experimentItem(experiment)->text(); }
    /// The value beside `field` in the details table; a null string when no such row.
    QString detail(const QString& field) const {
        const QTableWidget* table = history->details();
        for (int r = 0; r < table->rowCount(); ++r) {
            if (table->item(r, 0) && table->item(r, 0)->text() == field) {
                return table->item(r, 1) ? table->item(r, 1)->text() : QString("");
            }
        }
        return {};
    }
    /// Rows the history tree shows at the top level (after its filter).
    int shownExperiments() const { return history->tree()->model()->rowCount(); }
};

/// A second experiment "other" with a run, for filters and the trash.
int64_t addOther(OneExperiment& f) {
    const int64_t other = f.writer->createExperiment("other", "{}");
    f.writer->createRun(other, "amp", 0, 1, "{}", 10);
    f.window->session()->pollNow();
    return other;
}

/// Pixels of `view`'s viewport that differ from its background: something is drawn.
int drawnPixels(QAbstractItemView* view) {
    const QImage image = view->viewport()->grab().toImage();
    const QColor base = view->palette().color(QPalette::Base);
    int drawn = 0;
    for (int y = 0; y < image.height(); ++y) {
        for (int x = 0; x < image.width(); ++x) {
            drawn += image.pixelColor(x, y) != base ? 1 : 0;
        }
    }
    return drawn;
}

/// Fusion, noting the sort arrow each header section is drawn with.
class ArrowRecorder : public QProxyStyle {
  public:
    ArrowRecorder() : QProxyStyle(QStyleFactory::create("Fusion")) {}
    void drawControl(ControlElement element, const QStyleOption* option, QPainter* painter,
                     const QWidget* widget) const override {
        if (element == CE_Header) {
            if (const auto* h = qstyleoption_cast<const QStyleOptionHeader*>(option)) {
                arrows[h->section] = h->sortIndicator;
            }
        }
        QProxyStyle::drawControl(element, option, painter, widget);
    }
    mutable QHash<int, QStyleOptionHeader::SortIndicator> arrows;
};

}  // namespace

class HistoryTest : public QObject {
    Q_OBJECT
  private Q_SLOTS:
    void renameThroughTheDialog() {
        OneExperiment f;
        f.selectExperiment();
        QPushButton* rename = f.button("historyRename");
        QVERIFY(rename && rename->isEnabled());
        QString shown;
        answerNextDialog("  new-name ", true, &shown);
        rename->click();  // returns when the dialog is answered
        QCOMPARE(shown, QString("old-name"));
        QCOMPARE(f.writer->experiment(f.experiment)->name, std::string("new-name"));
        QCOMPARE(f.nameInTree(), QString("new-name"));
    }

    void cancelledOrBlankRenameChangesNothing() {
        OneExperiment f;
        f.selectExperiment();
        answerNextDialog("ignored", false);
        f.button("historyRename")->click();
        QCOMPARE(f.writer->experiment(f.experiment)->name, std::string("old-name"));
        answerNextDialog("   ", true);
        f.button("historyRename")->click();
        QCOMPARE(f.writer->experiment(f.experiment)->name, std::string("old-name"));
        QVERIFY(!f.history->renameExperiment(f.experiment, "\t"));
        QVERIFY(f.history->renameExperiment(f.experiment, "direct"));
        QCOMPARE(f.writer->experiment(f.experiment)->name, std::string("direct"));
        QCOMPARE(f.nameInTree(), QString("direct"));
    }

    void runsAreLabelledThroughTheDialog() {
        OneExperiment f;
        f.selectRun();
        QPushButton* rename = f.button("historyRename");
        QVERIFY(rename->isEnabled());
        QCOMPARE(rename->text(), QString("Label\u2026"));
        answerNextDialog(" lr 3e-4 ", true);
        rename->click();
        QCOMPARE(f.writer->run(f.run)->label, std::string("lr 3e-4"));
        QCOMPARE(f.window->runModel()->runItem(f.run)->text(),
                 QString("fp32 \u00b7 seed 1 \u2014 lr 3e-4"));
        QCOMPARE(f.writer->experiment(f.experiment)->name, std::string("old-name"));
        // A blank label clears it; a line break is refused with the reason.
        QVERIFY(f.history->setRunLabel(f.run, "  "));
        QCOMPARE(f.window->runModel()->runItem(f.run)->text(), QString("fp32 \u00b7 seed 1"));
        QSignalSpy errors(f.history, &HistoryView::error);
        QVERIFY(!f.history->setRunLabel(f.run, "two\nlines"));
        QCOMPARE(errors.size(), 1);
        QVERIFY(errors.at(0).at(0).toString().contains("line break"));
    }

    void tagsThroughTheDialogAndTheTagFilter() {
        OneExperiment f;
        addOther(f);
        QCOMPARE(f.shownExperiments(), 2);
        f.history->setNameFilter("old-name");
        f.selectExperiment();
        QString shown;
        answerNextDialog("baseline, Sweep , baseline", true, &shown);
        f.button("historyTags")->click();
        QCOMPARE(shown, QString());
        QCOMPARE(f.writer->experiment(f.experiment)->tags,
                 (std::vector<std::string>{"baseline", "Sweep"}));
        const QStandardItem* e = f.window->runModel()->experimentItem(f.experiment);
        QCOMPARE(f.window->runModel()->item(e->row(), RunTreeModel::TagsColumn)->text(),
                 QString("baseline, Sweep"));
        QVERIFY(f.history->setTags(f.run, true, "odd-one"));
        QCOMPARE(f.writer->run(f.run)->tags, std::vector<std::string>{"odd-one"});

        f.history->setNameFilter("tag:sweep");  // whole tag, any case
        QCOMPARE(f.shownExperiments(), 1);
        f.history->setNameFilter("tag:swe");
        QCOMPARE(f.shownExperiments(), 0);
        f.history->setNameFilter("odd");  // the name box matches tags too: the run's
        QCOMPARE(f.shownExperiments(), 1);
        QCOMPARE(f.history->tree()->model()->rowCount(f.history->tree()->model()->index(0, 0)), 1);
        f.history->setNameFilter("");
        QCOMPARE(f.shownExperiments(), 2);

        QSignalSpy errors(f.history, &HistoryView::error);
        QVERIFY(!f.history->setTags(f.experiment, false, QString(41, 'x')));
        QCOMPARE(errors.size(), 1);
        QVERIFY(errors.at(0).at(0).toString().contains("longer than 40"));
        QCOMPARE(f.writer->experiment(f.experiment)->tags.size(), size_t(2));
    }

    // Bringing an experiment back from the trash is no new run: the runs ticked stay
    // ticked and the restored ones are not ticked in their place.
    void undoOfATrashKeepsTheTicksAsTheyWere() {
        OneExperiment f;
        f.finish();
        const int64_t other = addOther(f);
        const QList<qint64> shown = f.window->runModel()->runsOfExperiment(other);
        QVERIFY(!shown.isEmpty());
        f.window->runModel()->setCheckedRuns(shown);
        QTRY_COMPARE(f.window->runModel()->checkedRuns(), shown);
        f.window->findChild<QTabWidget*>()->setCurrentWidget(f.history);
        f.history->setNameFilter("old-name");
        f.selectExperiment();
        QVERIFY(f.history->deleteSelected());
        QVERIFY(f.history->undoDelete());
        QVERIFY(f.window->runModel()->runItem(f.run));
        QTest::qWait(50);  // a change of ticks is signalled once per event-loop turn
        QCOMPARE(f.window->runModel()->checkedRuns(), shown);
        QVERIFY(f.window->announcedRuns().isEmpty());  // the restored runs are not new
        // A run new to the database is announced at once, beside what is shown.
        const int64_t fresh = f.writer->createRun(other, "amp", 1, 2, "{}", 10);
        f.writer->markRunning(fresh, "{}");
        f.window->session()->pollNow();
        QTRY_COMPARE(f.window->announcedRuns(), QList<qint64>{fresh});
        QCOMPARE(f.window->runModel()->checkedRuns(), shown);
    }

    void deleteMovesToTheTrashAndUndoRestores() {
        OneExperiment f;
        f.finish();
        const int64_t other = addOther(f);
        f.window->show();
        QVERIFY(QTest::qWaitForWindowActive(f.window.get()));
        f.window->findChild<QTabWidget*>()->setCurrentWidget(f.history);
        f.history->setNameFilter("old-name");
        f.selectExperiment();
        f.button("historyDelete")->click();
        QVERIFY(!f.writer->experiment(f.experiment)->trashed_at.empty());
        QCOMPARE(f.writer->stepCount(f.run), int64_t(0));  // none were written; the run is kept:
        QVERIFY(f.writer->run(f.run).has_value());
        QVERIFY(!f.window->runModel()->experimentItem(f.experiment));
        QVERIFY(!f.window->runModel()->runItem(f.run));
        auto* notice = f.history->findChild<QLabel*>("historyNotice");
        QVERIFY(notice->isVisible());
        QVERIFY(notice->text().contains("to the trash"));
        QVERIFY(f.button("historyUndo")->isVisible());
        f.history->setNameFilter("");
        QCOMPARE(f.shownExperiments(), 1);
        QCOMPARE(f.history->selectedExperiment(), qint64(0));

        // Ctrl+Z in the History tab brings it back.
        f.history->tree()->setFocus();
        QTest::keyClick(f.history->tree(), Qt::Key_Z, Qt::ControlModifier);
        QVERIFY(f.writer->experiment(f.experiment)->trashed_at.empty());
        QVERIFY(f.window->runModel()->experimentItem(f.experiment));
        QVERIFY(f.window->runModel()->runItem(f.run));
        QCOMPARE(f.shownExperiments(), 2);
        QVERIFY(!f.history->undoDelete());  // nothing left to undo

        // A run alone, then restored from the Trash view.
        f.history->setNameFilter("old-name");
        f.selectRun();
        QVERIFY(f.history->deleteSelected());
        QVERIFY(!f.window->runModel()->runItem(f.run));
        QCOMPARE(f.writer->experiment(f.experiment)->run_count, 0);
        auto* mode = f.history->findChild<QComboBox*>("historyMode");
        QCOMPARE(mode->itemText(1), QString("Trash (1)"));
        f.history->showTrash(true);
        QTreeView* trash = f.history->tree();
        QCOMPARE(trash->objectName(), QString("trash"));
        QCOMPARE(trash->model()->rowCount(), 1);
        QVERIFY(trash->model()->index(0, 1).data().toString().contains("old-name"));
        QVERIFY(f.button("historyRestore")->isVisible());
        QVERIFY(!f.button("historyDelete")->isVisible());
        trash->setCurrentIndex(trash->model()->index(0, 0));
        QCOMPARE(f.history->selected(), qMakePair(qint64(f.run), true));
        QCOMPARE(f.history->selectedExperiment(), qint64(0));  // never the experiment in view
        f.button("historyRestore")->click();
        QVERIFY(f.writer->run(f.run)->trashed_at.empty());
        QCOMPARE(trash->model()->rowCount(), 0);
        QVERIFY(f.window->runModel()->runItem(f.run));
        QVERIFY(f.writer->experiment(other).has_value());
    }

    // The Delete key moves the selected row to the trash, as the button does, and Help ›
    // Keyboard shortcuts lists it with the History tab's other keys.
    void theDeleteKeyMovesTheSelectedRowToTheTrash() {
        OneExperiment f;
        f.finish();
        f.window->show();
        QVERIFY(QTest::qWaitForWindowActive(f.window.get()));
        f.window->findChild<QTabWidget*>()->setCurrentWidget(f.history);
        f.selectExperiment();
        f.history->tree()->setFocus();
        QTest::keyClick(f.history->tree(), Qt::Key_Delete);
        QVERIFY(!f.writer->experiment(f.experiment)->trashed_at.empty());
        QVERIFY(!f.window->runModel()->experimentItem(f.experiment));
        // Ctrl+Z brings it back; in the Trash view the key erases nothing.
        QTest::keyClick(f.history->tree(), Qt::Key_Z, Qt::ControlModifier);
        QVERIFY(f.writer->experiment(f.experiment)->trashed_at.empty());
        f.selectExperiment();
        QVERIFY(f.history->deleteSelected());
        f.history->showTrash(true);
        f.history->tree()->setCurrentIndex(f.history->tree()->model()->index(0, 0));
        f.history->tree()->setFocus();
        QTest::keyClick(f.history->tree(), Qt::Key_Delete);
        QVERIFY(f.writer->experiment(f.experiment).has_value());
        const QString key = QKeySequence(QKeySequence::Delete).toString(QKeySequence::NativeText);
        bool listed = false;
        for (const auto& [keys, what] : f.window->shortcutRows()) {
            listed = listed || (keys.split(QStringLiteral(", ")).contains(key) &&
                                what.startsWith(QStringLiteral("History tab")));
        }
        QVERIFY2(listed, qPrintable(key));
    }

    void runningRunsStayOutOfTheTrash() {
        OneExperiment f;
        f.writer->markRunning(f.run, "{}");  // this process owns it: it is training
        f.window->session()->pollNow();
        f.selectRun();
        QSignalSpy errors(f.history, &HistoryView::error);
        QVERIFY(!f.history->deleteSelected());
        QCOMPARE(errors.size(), 1);
        QVERIFY(errors.at(0).at(0).toString().contains("is training; cancel it"));
        f.selectExperiment();
        QVERIFY(!f.history->deleteSelected());
        QVERIFY(f.writer->trash().empty());
    }

    void emptyTrashErasesAfterConfirmation() {
        OneExperiment f;
        f.finish();
        const int64_t other = addOther(f);
        f.history->setNameFilter("old-name");
        f.selectExperiment();
        QVERIFY(f.history->deleteSelected());
        f.history->showTrash(true);
        f.history->tree()->setCurrentIndex(f.history->tree()->model()->index(0, 0));
        QTRY_COMPARE(f.detail("Name"), QString("old-name"));  // details of trashed rows too
        QCOMPARE(f.detail("Status"), QString("finished"));
        QVERIFY(f.detail("In the trash").startsWith("since "));
        QVERIFY(f.button("historyEmptyTrash")->isEnabled());
        bool asked = false;
        f.history->setConfirm([&](const QString&, const QString& question) {
            asked = question.contains("cannot be undone");
            return false;  // the user says no
        });
        QVERIFY(!f.history->emptyTrash());
        QVERIFY(asked);
        QVERIFY(f.writer->experiment(f.experiment).has_value());
        f.history->setConfirm([](const QString&, const QString&) { return true; });
        QVERIFY(f.history->emptyTrash());
        QVERIFY(!f.writer->experiment(f.experiment).has_value());
        QVERIFY(!f.writer->run(f.run).has_value());
        QCOMPARE(f.history->tree()->model()->rowCount(), 0);
        QVERIFY(!f.button("historyEmptyTrash")->isEnabled());
        QVERIFY(!f.history->undoDelete());  // erased: nothing to bring back
        QVERIFY(!f.history->emptyTrash());  // empty: nothing to ask
        f.history->showTrash(false);
        f.history->setNameFilter("");
        QCOMPARE(f.shownExperiments(), 1);
        QVERIFY(f.writer->experiment(other).has_value());
    }

    void detailsAreATableOfNamedRows() {
        OneExperiment f;
        std::vector<run::StepRecord> steps;
        for (int64_t i = 1; i <= 10; ++i) {
            run::StepRecord s;
            s.step = i;
            s.samples = 64 * i;
            s.loss = 1.0 / static_cast<double>(i);
            s.step_ms = 12.5;
            s.timed = i > 1;
            s.mem_peak = int64_t{529} << 20;
            s.wall_s = 0.1 * static_cast<double>(i);
            steps.push_back(s);
        }
        f.writer->insertSteps(f.run, steps);
        f.writer->insertEvals(f.run, {{10, 640, 0.4, 0.871, 1.0}});
        f.writer->setRunLabel(f.run, "first try");
        f.window->session()->pollNow();
        f.selectRun();
        QTRY_COMPARE(f.detail("Median step time").left(7), QString("12.5 ms"));
        QCOMPARE(f.detail("Peak memory"), QString("529 MiB"));
        QVERIFY(f.detail("Final validation accuracy").startsWith("0.8710"));
        QCOMPARE(f.detail("Label"), QString("first try"));
        QCOMPARE(f.detail("Arm"), QString("fp32"));
        QCOMPARE(f.detail("Steps"), QString("10 of 10 (9 timed)"));
        QVERIFY(f.detail("Status").startsWith("queued"));
        QVERIFY(f.detail("Summary").contains("never started"));

        // The arm's figures come from its finished runs only, as the verdict's do.
        f.selectExperiment();
        QTRY_COMPARE(f.detail("Name"), QString("old-name"));
        QVERIFY(!f.detail("fp32").contains("529 MiB"));
        f.writer->finishRun(f.run, run::RunStatus::Finished, "");
        f.window->session()->pollNow();
        f.selectRun();
        f.selectExperiment();
        QCOMPARE(f.detail("Notes"), QString("first notes"));
        QCOMPARE(f.detail("Runs"), QString("1"));
        QTRY_VERIFY(f.detail("fp32").contains("529 MiB"));  // the arm's figures
        QVERIFY(f.detail("Median step time").isNull());
    }
    // The details under the history said nothing until a row was selected: they say
    // what fills them, and make way for the rows. An empty history says there is
    // nothing yet, or that the filter lets nothing through.
    void anEmptyViewSaysWhatFillsIt() {
        test::Workspace ws;
        QVERIFY(ws.open());
        HistoryView* history = ws.window->history();
        ws.window->resize(1024, 700);
        ws.window->show();
        ws.window->tabs()->setCurrentWidget(history);
        QVERIFY(QTest::qWaitForWindowExposed(ws.window.get()));
        auto* treeNote = history->tree()->findChild<EmptyViewNote*>();
        QVERIFY(treeNote && treeNote->isShown());
        QVERIFY2(treeNote->text().contains("No experiments"), qPrintable(treeNote->text()));
        QVERIFY(drawnPixels(history->tree()) > 0);

        auto writer = store::Database::open(ws.dbPath().toStdString());
        const int64_t e = writer->createExperiment("first", "{}");
        writer->createRun(e, "fp32", 0, 1, "{}", 10);
        ws.window->session()->pollNow();
        QTRY_VERIFY(!treeNote->isShown());
        history->setNameFilter(QStringLiteral("no such name"));
        QTRY_VERIFY(treeNote->isShown());
        QVERIFY2(treeNote->text().contains("filter"), qPrintable(treeNote->text()));
        history->setNameFilter({});
        QTRY_VERIFY(!treeNote->isShown());

        QTableWidget* details = history->details();
        auto* detailsNote = details->findChild<EmptyViewNote*>();
        QVERIFY(detailsNote && detailsNote->isShown());
        QVERIFY2(detailsNote->text().startsWith("Select an experiment or a run"),
                 qPrintable(detailsNote->text()));
        QVERIFY(drawnPixels(details) > 0);
        QTreeView* tree = history->tree();
        tree->setCurrentIndex(tree->model()->index(0, 0));
        QTRY_VERIFY(details->rowCount() > 0);
        QVERIFY(!detailsNote->isShown());
    }

    void experimentNotesThroughTheDialog() {
        OneExperiment f;
        f.selectExperiment();
        QString shown;
        answerNextDialog("line one\nline two", true, &shown);
        f.button("historyNotes")->click();
        QCOMPARE(shown, QString("first notes"));  // the dialog opens with the stored notes
        QCOMPARE(f.writer->experiment(f.experiment)->notes, std::string("line one\nline two"));

        answerNextDialog("thrown away", false);
        f.button("historyNotes")->click();
        QCOMPARE(f.writer->experiment(f.experiment)->notes, std::string("line one\nline two"));
    }

    void runNotesThroughTheDialog() {
        OneExperiment f;
        f.selectRun();
        answerNextDialog("lr too high?", true);
        f.button("historyNotes")->click();
        QCOMPARE(f.writer->run(f.run)->notes, std::string("lr too high?"));
        QCOMPARE(f.writer->experiment(f.experiment)->notes, std::string("first notes"));
        // Clearing them is a change too.
        QVERIFY(f.history->setNotes(f.run, true, QString()));
        QCOMPARE(f.writer->run(f.run)->notes, std::string());
    }

    void anExperimentsStepsAreItsRunsStepsAddedUp() {
        OneExperiment f;
        std::vector<run::StepRecord> rows(4);
        for (size_t i = 0; i < rows.size(); ++i) {
            rows[i].step = static_cast<int64_t>(i) + 1;
        }
        f.writer->insertSteps(f.run, rows);
        f.writer->createRun(f.experiment, "amp", 1, 1, "{}", 6);  // planned, not started
        f.window->session()->pollNow();
        RunTreeModel* model = f.window->runModel();
        QStandardItem* experiment = model->experimentItem(f.experiment);
        QVERIFY(experiment);
        QCOMPARE(model->item(experiment->row(), RunTreeModel::StepsColumn)->text(),
                 QString("4 / 16"));
        // Each run keeps its own steps.
        QCOMPARE(experiment->child(0, RunTreeModel::StepsColumn)->text(), QString("4 / 10"));
        QCOMPARE(experiment->child(1, RunTreeModel::StepsColumn)->text(), QString("0 / 6"));
    }

    void theDateArrowPointsTheWayTheRowsRun() {
        ArrowRecorder style;  // outlives the window that draws with it
        OneExperiment f;
        addOther(f);
        QHeaderView* header = f.history->tree()->header();
        QCOMPARE(header->sortIndicatorSection(), int(RunTreeModel::DateColumn));
        QCOMPARE(header->sortIndicatorOrder(), Qt::DescendingOrder);  // newest first
        header->setStyle(&style);
        f.history->tree()->resize(900, 300);
        header->grab();
        // Descending is drawn as the down arrow (Fusion on Linux draws SortDown as \u25bc).
        QCOMPARE(style.arrows.value(RunTreeModel::DateColumn), QStyleOptionHeader::SortDown);
        f.history->tree()->sortByColumn(RunTreeModel::DateColumn, Qt::AscendingOrder);
        header->grab();
        QCOMPARE(style.arrows.value(RunTreeModel::DateColumn), QStyleOptionHeader::SortUp);
        QCOMPARE(style.arrows.value(RunTreeModel::NameColumn), QStyleOptionHeader::None);
    }

    // A file that is not a database named at the start: the window says no database
    // is open (the status bar, the editor, History), and nothing offers to write.
    void withoutADatabaseTheWindowSaysSoAndOffersNothingThatWrites() {
        test::Workspace ws;
        const QString garbage = ws.dir.filePath("notes.db");
        {
            QFile f(garbage);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(QByteArray("not a database\n").repeated(300));
        }
        QVERIFY(!ws.window->openDatabase(garbage));
        QVERIFY(!ws.window->session()->isOpen());
        const QString why = QStringLiteral("No database is open");
        expectNothingWrites(*ws.window, why);
        auto* label = ws.window->findChild<QLabel*>("databaseLabel");
        QVERIFY(label);
        QVERIFY2(label->text().contains(why), qPrintable(label->text()));
        HistoryView* history = ws.window->history();
        auto* note = history->tree()->findChild<EmptyViewNote*>();
        QVERIFY(note);
        QVERIFY2(note->text().contains(why), qPrintable(note->text()));
        // A database opened after: the note and the label say what is there.
        QVERIFY(ws.open());
        QVERIFY(!note->text().contains(why));
        QVERIFY(label->text().contains(QFileInfo(ws.dbPath()).fileName()));
    }

    // A database open read-only: everything that would write is off and says why
    // (Notes… took the text and then failed with "attempt to write a readonly
    // database"), and the editor does not say "ready to run" beside a disabled Run.
    void aReadOnlyDatabaseOffersNothingThatWritesAndSaysWhy() {
        OneExperiment f;
        f.writer.reset();
        QVERIFY(f.window->openDatabase(f.dbPath(), /*readOnly=*/true));
        QVERIFY(f.window->session()->isReadOnly());
        f.window->session()->pollNow();
        QTRY_VERIFY(f.history->tree()->model()->rowCount() == 1);
        f.history->tree()->setCurrentIndex(f.history->tree()->model()->index(0, 0));
        QCOMPARE(f.history->selected().first, qint64(f.experiment));
        expectNothingWrites(*f.window, QStringLiteral("read-only"));
        QVERIFY(f.window->findChild<QPushButton*>("historyShow")->isEnabled());  // reading is fine
    }

    void nothingChangesWithoutADatabase() {
        OneExperiment f;
        f.writer.reset();
        f.window->session()->close();
        QVERIFY(!f.history->renameExperiment(f.experiment, "x"));
        QVERIFY(!f.history->setNotes(f.experiment, false, "x"));
    }
};

QTEST_MAIN(HistoryTest)
#include "test_ui_history.moc"
