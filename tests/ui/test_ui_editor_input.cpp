// The editor's answers to what the user does: a training script's interpreter checked
// for the modules the script imports before Run is offered.
#include <QAction>
#include <QFile>
#include <QListWidget>
#include <QTemporaryDir>
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
};

QTEST_MAIN(EditorInputTest)
#include "test_ui_editor_input.moc"
