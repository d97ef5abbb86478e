// Help › About: the menu opens it, and it names this build (version, commit, build
// type), the Qt and LibTorch it runs with, CUDA, the open database and the README;
// the window carries the application icon.
#include <QAction>
#include <QApplication>
#include <QDialog>
#include <QDir>
#include <QFile>
#include <QMenu>
#include <QMenuBar>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QtTest>

#include "UiTestSupport.h"
#include "core/config/BuildInfo.h"
#include "core/probe/Environment.h"
#include "ui/AboutDialog.h"
#include "ui/data/StoreSession.h"

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

    // Help lists every menu command's keys, from the menus themselves.
    void helpListsTheKeyboardShortcuts() {
        test::Workspace w;
        QVERIFY(w.open());
        QDialog* dialog = w.window->showShortcuts();
        auto* table = dialog->findChild<QTableWidget*>("shortcuts");
        QVERIFY(table);
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
        dialog->close();
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
