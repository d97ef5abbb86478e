// The editor's answers to what the user does: a training script's interpreter checked
// for the modules the script imports before Run is offered; the wheel over the form
// scrolls it and turns no box it passes; the fast verdict's note on the CPU; the
// preset box after an edit.
#include <QAction>
#include <QComboBox>
#include <QFile>
#include <QListWidget>
#include <QScrollArea>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QWheelEvent>
#include <QtTest>

#include "UiTestSupport.h"
#include "ui/MetaTypes.h"
#include "ui/editor/ExperimentEditor.h"
#include "ui/editor/SetupPanel.h"

using namespace ampbench;
using namespace ampbench::ui;

namespace {

QString listed(const ExperimentEditor& editor) {
    QStringList out;
    for (int i = 0; i < editor.errorList()->count(); ++i) {
        out << editor.errorList()->item(i)->text();
    }
    return out.join('\n');
}

void writeFile(const QString& path, const QByteArray& text, bool executable = false) {
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(text);
    f.close();
    if (executable) {
        f.setPermissions(QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
    }
}

/// A script importing torch and ampbench, run by an interpreter that sees no site
/// packages (python3 -S), so torch is missing whatever this host has.
config::ExperimentSpec scriptWithoutTorch(const QTemporaryDir& dir) {
    writeFile(dir.filePath("train.py"), "import torch\nimport ampbench\n");
    writeFile(dir.filePath("bare-python"), "#!/bin/sh\nexec python3 -S \"$@\"\n", true);
    config::ExperimentSpec s = test::tinySpec(4);
    s.model.name = "script";
    s.model.file = dir.filePath("train.py").toStdString();
    s.model.python = dir.filePath("bare-python").toStdString();
    s.eval_interval = 0;
    s.arms.resize(1);
    s.arms[0] = config::ArmSpec{};
    s.arms[0].name = "fp32";
    return s;
}

/// One notch of the wheel over `w`, down for a negative `notches`.
void wheel(QWidget* w, int notches) {
    const QPointF at(w->width() / 2.0, w->height() / 2.0);
    QWheelEvent e(at, w->mapToGlobal(at), QPoint(), QPoint(0, 120 * notches), Qt::NoButton,
                  Qt::NoModifier, Qt::NoScrollPhase, false);
    QApplication::sendEvent(w, &e);
}

}  // namespace

class EditorInputTest : public QObject {
    Q_OBJECT
  private Q_SLOTS:
    void initTestCase() { registerMetaTypes(); }

    // "No problems: ready to run" only once the interpreter imported what the script
    // imports; a missing torch is named with the package to install, and Run stays off
    // while the check runs and after it.
    void aScriptWhoseInterpreterLacksTorchIsNotOfferedToRun() {
        test::Workspace ws;
        QVERIFY(ws.open());
        QTemporaryDir dir;
        ExperimentEditor* editor = ws.window->editor();
        editor->setSpec(scriptWithoutTorch(dir));
        QVERIFY(editor->checking());
        QVERIFY2(!ws.window->runAction()->isEnabled(), qPrintable(listed(*editor)));
        QVERIFY2(!listed(*editor).contains("ready to run"), qPrintable(listed(*editor)));
        QTRY_VERIFY_WITH_TIMEOUT(!editor->checking(), 60000);
        const QString problems = listed(*editor);
        QVERIFY2(problems.contains("cannot import torch"), qPrintable(problems));
        QVERIFY2(problems.contains("python3-torch"), qPrintable(problems));
        QVERIFY2(!problems.contains("ready to run"), qPrintable(problems));
        QVERIFY(editor->fieldWidget("model.python")->property("invalid").toBool());
        QVERIFY(!ws.window->runAction()->isEnabled());
        // An interpreter with a torch of its own: ready, and Run is offered.
        QTemporaryDir site;
        QVERIFY(QDir(site.path()).mkpath("torch"));
        writeFile(site.filePath("torch/__init__.py"), "\n");
        writeFile(dir.filePath("site-python"),
                  "#!/bin/sh\nPYTHONPATH=" + site.path().toUtf8() +
                      ":$PYTHONPATH exec python3 -S \"$@\"\n",
                  true);
        auto spec = editor->spec();
        spec.model.python = dir.filePath("site-python").toStdString();
        editor->setSpec(spec);
        QTRY_VERIFY_WITH_TIMEOUT(!editor->checking(), 60000);
        QVERIFY2(listed(*editor).contains("ready to run"), qPrintable(listed(*editor)));
        QVERIFY2(ws.window->runAction()->isEnabled(), qPrintable(listed(*editor)));
        QVERIFY2(editor->setupPanel()->factsText().contains("torch"),
                 qPrintable(editor->setupPanel()->factsText()));
    }

    // Scrolling over CPU threads turned it to -9 and took Run away: a box takes the
    // wheel only once it has focus, and then stops at its field's least value.
    void theWheelTurnsOnlyAFocusedBoxAndStopsAtItsBounds() {
        ExperimentEditor editor;
        editor.resize(1024, 700);
        editor.show();
        QVERIFY(QTest::qWaitForWindowExposed(&editor));
        auto* threads = qobject_cast<QSpinBox*>(editor.fieldWidget("cpu_threads"));
        auto* device = qobject_cast<QComboBox*>(editor.fieldWidget("device"));
        QVERIFY(threads && device);
        threads->setValue(0);
        QCOMPARE(threads->focusPolicy(), Qt::StrongFocus);
        QCOMPARE(device->focusPolicy(), Qt::StrongFocus);
        const int deviceAt = device->currentIndex();
        wheel(threads, -9);
        wheel(device, -1);
        wheel(device, 1);
        QCOMPARE(threads->value(), 0);
        QCOMPARE(device->currentIndex(), deviceAt);
        QVERIFY2(editor.isValid(), qPrintable(listed(editor)));
        // Focused, it turns, but not below 0 (every logical CPU).
        editor.activateWindow();
        threads->setFocus();
        QTRY_VERIFY(threads->hasFocus());
        wheel(threads, 2);
        QCOMPARE(threads->value(), 2);
        wheel(threads, -5);
        QCOMPARE(threads->value(), 0);
        QTest::keyClick(threads, Qt::Key_Down);
        QCOMPARE(threads->value(), 0);
        QVERIFY2(editor.isValid(), qPrintable(listed(editor)));
        // A bad value loaded from a file still shows, and is named.
        auto spec = editor.spec();
        spec.cpu_threads = -9;
        editor.setSpec(spec);
        QCOMPARE(threads->value(), -9);
        QVERIFY(!editor.isValid());
    }

    // Ticked with the CPU as the device, the fast verdict says what it does there.
    void theFastVerdictOnTheCpuSaysWhatItDoes() {
        ExperimentEditor editor;
        auto spec = test::tinySpec(8);
        spec.fast_verdict = true;
        editor.setSpec(spec);
        QVERIFY2(listed(editor).contains("Fast verdict is for CUDA") &&
                     listed(editor).contains("one at a time"),
                 qPrintable(listed(editor)));
        QVERIFY(editor.isValid());  // a note, not a problem
        spec.fast_verdict = false;
        editor.setSpec(spec);
        QVERIFY2(!listed(editor).contains("Fast verdict"), qPrintable(listed(editor)));
    }

    // After an edit the preset box no longer names the preset: it says the experiment
    // is custom, edited from it; undoing the edit names the preset again.
    void thePresetBoxSaysWhenTheExperimentIsEdited() {
        ExperimentEditor editor;
        auto* presets = editor.findChild<QComboBox*>("preset");
        QVERIFY(presets);
        QVERIFY(editor.loadPreset("smoke"));
        QCOMPARE(presets->currentText(), QStringLiteral("smoke"));
        auto* microBatch = qobject_cast<QSpinBox*>(editor.fieldWidget("micro_batch"));
        QVERIFY(microBatch);
        const int was = microBatch->value();
        microBatch->setValue(was + 1);
        QCOMPARE(presets->currentText(), QStringLiteral("custom (edited from smoke)"));
        microBatch->setValue(was);
        QCOMPARE(presets->currentText(), QStringLiteral("smoke"));
        QCOMPARE(presets->count(), static_cast<int>(config::presetNames().size()));
        // A spec set whole that is no preset is custom.
        auto spec = test::tinySpec(8);
        editor.setSpec(spec);
        QCOMPARE(presets->currentText(), QStringLiteral("custom"));
        QVERIFY(editor.loadPreset("default"));
        QCOMPARE(presets->currentText(), QStringLiteral("default"));
    }
};

QTEST_MAIN(EditorInputTest)
#include "test_ui_editor_input.moc"
