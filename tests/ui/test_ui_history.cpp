// The History view's rename and notes actions, through the dialogs the buttons
// open (answered by a timer) and through the methods the dialogs call.
#include <QApplication>
#include <QInputDialog>
#include <QPushButton>
#include <QTimer>
#include <QTreeView>
#include <QtTest>

#include "UiTestSupport.h"
#include "core/store/Database.h"
#include "ui/data/StoreSession.h"
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
    QPushButton* button(const char* name) const {
        return history->findChild<QPushButton*>(QString::fromLatin1(name));
    }
    QString nameInTree() const { return window->runModel()->experimentItem(experiment)->text(); }
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

    void runsCannotBeRenamed() {
        OneExperiment f;
        f.selectRun();
        QVERIFY(!f.button("historyRename")->isEnabled());
        QVERIFY(f.button("historyNotes")->isEnabled());
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
