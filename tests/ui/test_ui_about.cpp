// Help › About: the menu opens it, and it names this build (version, commit, build
// type), the Qt and LibTorch it runs with, CUDA, the open database and the README;
// the window carries the application icon. Help shows the README by section and
// the keyboard shortcuts, read from the actions.
#include <QAction>
#include <QApplication>
#include <QDialog>
#include <QDir>
#include <QFile>
#include <QMenu>
#include <QMenuBar>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTextBrowser>
#include <QtTest>

#include "UiTestSupport.h"
#include "core/config/BuildInfo.h"
#include "core/probe/Environment.h"
#include "ui/AboutDialog.h"
#include "ui/HelpWindow.h"
#include "ui/data/StoreSession.h"
#include "ui/runs/HistoryView.h"

using namespace ampbench;
using namespace ampbench::ui;

class AboutTest : public QObject {
    Q_OBJECT
  private Q_SLOTS:
    void helpMenuOpensTheAboutBox() {
        test::Workspace w;
        QVERIFY(w.open());
        QAction* help = nullptr;
        for (QAction* a : w.window->menuBar()->actions()) {
            if (a->text() == "&Help") {
                help = a;
            }
        }
        QVERIFY2(help && help->menu(), "no Help menu");
        QVERIFY(help->menu()->actions().contains(w.window->aboutAction()));
        w.window->aboutAction()->trigger();
        auto* dialog = w.window->findChild<AboutDialog*>();
        QVERIFY(dialog);
        QVERIFY(dialog->isVisible());
        const QString text = dialog->text();
        QVERIFY2(text.contains(QString::fromUtf8(config::buildVersion())), qPrintable(text));
        QVERIFY2(text.contains(QString::fromUtf8(config::buildCommit())), qPrintable(text));
        QVERIFY2(text.contains(QString::fromUtf8(config::buildType())), qPrintable(text));
        QVERIFY2(text.contains(QString("Qt</b></td><td>%1").arg(qVersion())), qPrintable(text));
        const auto torch = QString::fromStdString(probe::probeEnvironment("cpu").libtorch_version);
        QVERIFY(!torch.isEmpty());
        QVERIFY2(text.contains("LibTorch</b></td><td>" + torch), qPrintable(text));
        QVERIFY2(text.contains("CUDA</b></td><td>"), qPrintable(text));
        QVERIFY2(text.contains(QDir::toNativeSeparators(w.dbPath()).toHtmlEscaped()),
                 qPrintable(text));
        // Built from a source tree, the README beside it is linked.
        QVERIFY2(text.contains("README.md'"), qPrintable(text));
        dialog->close();
    }

    // Help lists every command's keys, from the actions themselves.
    void helpListsTheKeyboardShortcuts() {
        test::Workspace w;
        QVERIFY(w.open());
        HelpWindow* help = w.window->showShortcuts();
        QVERIFY(help && help->isVisible());
        QCOMPARE(help->currentTopic(), HelpWindow::shortcutsTopic());
        QTableWidget* table = help->shortcutsTable();
        QVERIFY(table && table->isVisible());
        QStringList rows;
        for (int r = 0; r < table->rowCount(); ++r) {
            rows << table->item(r, 0)->text() + " = " + table->item(r, 1)->text();
        }
        const QString run = w.window->runAction()->shortcut().toString(QKeySequence::NativeText);
        QVERIFY2(rows.contains(run + QStringLiteral(" = Run \u203a Run experiment")),
                 qPrintable(rows.join('\n')));
        QVERIFY2(rows.filter(QStringLiteral("Find max batch")).size() == 1,
                 qPrintable(rows.join('\n')));
        QVERIFY2(rows.filter(QStringLiteral("Double-click")).size() == 1,
                 qPrintable(rows.join('\n')));
        // An action of a tab, not of a menu: History's undo of a delete.
        QVERIFY2(rows.filter(QStringLiteral("History tab: Undo delete")).size() == 1,
                 qPrintable(rows.join('\n')));
        // A shortcut given to an action later is listed too: nothing is kept by hand.
        auto* extra = new QAction("Extra command", w.window->history());
        extra->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_F9));
        w.window->history()->addAction(extra);
        bool found = false;
        for (const auto& [keys, what] : w.window->shortcutRows()) {
            found = found || (what.endsWith("Extra command") &&
                              keys == extra->shortcut().toString(QKeySequence::NativeText));
        }
        QVERIFY(found);
        // The help window, open already, shows it when asked again.
        QCOMPARE(w.window->showShortcuts(), help);
        QVERIFY(!table->findItems("History tab: Extra command", Qt::MatchExactly).isEmpty());
        help->close();
    }

    // Help › Contents: the README's sections in a list, each shown on its own; a link
    // to a heading shows its section; Help › Topics offers the same sections.
    void helpShowsTheReadmeBySection() {
        test::Workspace w;
        QVERIFY(w.open());
        QFile file(readmePath(QCoreApplication::applicationDirPath()));
        QVERIFY(file.open(QIODevice::ReadOnly | QIODevice::Text));
        const QString readme = QString::fromUtf8(file.readAll());
        const auto sections = markdownSections(readme, "Overview");
        QVERIFY(sections.size() > 5);
        HelpWindow* help = w.window->showHelp();
        QVERIFY(help->isVisible());
        QStringList expected;
        for (const auto& s : sections) {
            expected << s.title;
        }
        expected << HelpWindow::shortcutsTopic();
        QCOMPARE(help->topics(), expected);
        QVERIFY(help->topics().contains("Your data is safe"));
        QVERIFY(help->showTopic("Your data is safe"));
        QCOMPARE(help->currentTopic(), QString("Your data is safe"));
        const QString shown = help->browser()->toPlainText();
        QVERIFY2(shown.startsWith("Your data is safe"), qPrintable(shown.left(80)));
        QVERIFY2(!shown.contains("## "), "markdown is rendered, not shown raw");
        QVERIFY(shown.size() < readme.size() / 3);  // one section at a time
        // By anchor, as a README link names it.
        QVERIFY(help->showTopic("#the-desktop-workbench"));
        QCOMPARE(help->currentTopic(), QString("The desktop workbench"));
        QVERIFY(!help->showTopic("no-such-heading"));
        QCOMPARE(w.window->showHelp(), help);  // one window, raised again

        QMenu* topics = nullptr;
        for (QAction* a : w.window->menuBar()->actions()) {
            if (a->text() == "&Help") {
                for (QAction* b : a->menu()->actions()) {
                    if (b->menu() && b->text() == "&Topics") {
                        topics = b->menu();
                    }
                }
            }
        }
        QVERIFY(topics);
        Q_EMIT topics->aboutToShow();
        QStringList offered;
        for (QAction* a : topics->actions()) {
            offered << a->text();
        }
        expected.removeLast();
        QCOMPARE(offered, expected);
        topics->actions().at(1)->trigger();
        QCOMPARE(help->currentTopic(), expected.at(1));
    }

    // Sections are cut at "## " outside code fences; inner headings are anchors of
    // their section.
    void markdownIsCutAtItsSectionHeadings() {
        const QString md =
            "# Tool\nIntro.\n## First part\nText.\n```\n## not a heading\n```\n"
            "### A detail, here\nMore.\n## Second: the end\nLast.\n";
        const auto s = markdownSections(md, "Overview");
        QCOMPARE(s.size(), 3);
        QCOMPARE(s[0].title, QString("Tool"));
        QCOMPARE(s[1].title, QString("First part"));
        QVERIFY(s[1].markdown.contains("## not a heading"));
        QCOMPARE(s[1].inner_anchors, QStringList{"a-detail-here"});
        QCOMPARE(s[2].anchor, QString("second-the-end"));
        QCOMPARE(headingAnchor("Your data is safe"), QString("your-data-is-safe"));
    }

    void withoutADatabaseItSaysSo() {
        AboutDialog dialog(QString{});
        QVERIFY2(dialog.text().contains("none open"), qPrintable(dialog.text()));
    }

    void theInstalledReadmeComesFirst() {
        QTemporaryDir prefix;
        QVERIFY(QDir(prefix.path()).mkpath("bin"));
        QVERIFY(QDir(prefix.path()).mkpath("share/doc/ampbench"));
        QFile readme(prefix.filePath("share/doc/ampbench/README.md"));
        QVERIFY(readme.open(QIODevice::WriteOnly));
        readme.close();
        QCOMPARE(readmePath(prefix.filePath("bin")), readme.fileName());
        // Nothing installed there: the source tree's README, which exists in a build.
        QTemporaryDir empty;
        const QString fallback = readmePath(empty.path());
        QVERIFY(fallback.endsWith("/README.md"));
        QVERIFY(QFile::exists(fallback));
    }

    void theWindowTitleNamesTheFileAndLeavesTheProductToQt() {
        QApplication::setApplicationDisplayName("AMP Workbench");
        test::Workspace w;
        QVERIFY(w.open());
        // Qt shows "runs.db \u2014 AMP Workbench": the product name once, after the file.
        QCOMPARE(w.window->windowTitle(), QString("runs.db"));
        QCOMPARE(w.window->windowFilePath(), w.window->session()->path());
        QVERIFY(!w.window->windowTitle().contains("AMP Workbench"));
    }

    void theWindowHasTheApplicationIcon() {
        test::Workspace w;
        const QIcon icon = w.window->windowIcon();
        QVERIFY(!icon.isNull());
        QVERIFY(icon.availableSizes().contains(QSize(256, 256)));
        QVERIFY(icon.availableSizes().contains(QSize(16, 16)));
    }
};

QTEST_MAIN(AboutTest)
#include "test_ui_about.moc"
