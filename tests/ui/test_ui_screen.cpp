// The window on a screen of its own size: run under an offscreen screen of 1024×700
// (laptop-screen.json), what the window restores from the last session fits it.
#include <QComboBox>
#include <QGuiApplication>
#include <QPushButton>
#include <QScreen>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QtTest>

#include "UiTestSupport.h"
#include "ui/MetaTypes.h"
#include "ui/Settings.h"
#include "ui/editor/ExperimentEditor.h"

using namespace ampbench;
using namespace ampbench::ui;

class ScreenTest : public QObject {
    Q_OBJECT
  private Q_SLOTS:
    void initTestCase() { registerMetaTypes(); }

    // Left at 1280×720 on a larger screen, the window opens within a 1024×700 one: it
    // came back at 1280×720, with the arm buttons, "Run on" and the status bar past
    // the screen's edges.
    void aWindowLeftLargerOpensWithinASmallerScreen() {
        const QRect screen = QGuiApplication::primaryScreen()->availableGeometry();
        QCOMPARE(screen.size(), QSize(1024, 700));
        QTemporaryDir dir;
        Settings settings(dir.filePath("settings.ini"));
        {
            MainWindow larger(settings);
            larger.setMessageBoxesEnabled(false);
            larger.show();
            QVERIFY(QTest::qWaitForWindowExposed(&larger));
            larger.setGeometry(QRect(QPoint(40, 30), QSize(1280, 720)));
            QTRY_COMPARE(larger.size(), QSize(1280, 720));
            larger.close();  // stores the geometry as a session's end does
        }
        MainWindow again(settings);
        again.setMessageBoxesEnabled(false);
        again.show();
        QVERIFY(QTest::qWaitForWindowExposed(&again));
        QVERIFY2(screen.contains(again.frameGeometry()),
                 qPrintable(QStringLiteral("%1×%2 at %3,%4 on a %5×%6 screen")
                                .arg(again.frameGeometry().width())
                                .arg(again.frameGeometry().height())
                                .arg(again.frameGeometry().x())
                                .arg(again.frameGeometry().y())
                                .arg(screen.width())
                                .arg(screen.height())));
        // What was off the screen is on it now.
        QWidget* seen[] = {again.statusBar(), again.editor()->runOnBox(),
                           again.editor()->findChild<QPushButton*>("removeArm")};
        for (QWidget* w : seen) {
            QVERIFY(w);
            const QRect where(w->mapToGlobal(QPoint(0, 0)), w->size());
            QVERIFY2(screen.contains(where),
                     qPrintable(w->objectName() + QStringLiteral(" at %1,%2 %3×%4")
                                                      .arg(where.x())
                                                      .arg(where.y())
                                                      .arg(where.width())
                                                      .arg(where.height())));
        }
    }
};

QTEST_MAIN(ScreenTest)
#include "test_ui_screen.moc"
