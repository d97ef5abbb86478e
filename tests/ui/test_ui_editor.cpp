// The experiment editor: inline validation, the Run action, JSON in and out.
#include <ATen/ATen.h>
#include <torch/csrc/jit/api/module.h>
#include <QAction>
#include <QComboBox>
#include <QFileInfo>
#include <QGroupBox>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QToolButton>
#include <QTreeWidget>
#include <QtTest>

#include "UiTestSupport.h"
#include "core/config/SpecFields.h"
#include "core/config/SpecJson.h"
#include "core/parallel/Communicator.h"
#include "core/probe/Environment.h"
#include "ui/editor/ArmsTableModel.h"
#include "ui/editor/ExperimentEditor.h"
#include "ui/editor/SetupPanel.h"
#include "ui/editor/SpecForm.h"

using namespace ampbench;
using namespace ampbench::ui;

namespace {

QStringList listed(const ExperimentEditor& editor) {
    QStringList out;
    for (int i = 0; i < editor.errorList()->count(); ++i) {
        out << editor.errorList()->item(i)->text();
    }
    return out;
}

bool anyContains(const QStringList& list, const QString& text) {
    for (const QString& s : list) {
        if (s.contains(text)) {
            return true;
        }
    }
    return false;
}

/// A scripted linear classifier of 1×8×8 images into `classes` classes, saved.
void saveLinearModel(const QString& path, int classes) {
    torch::jit::Module m("__torch__.Linear");
    m.register_attribute("training", c10::BoolType::get(), true);
    m.register_parameter("weight", at::zeros({classes, 64}).requires_grad_(), false);
    m.register_parameter("bias", at::zeros({classes}).requires_grad_(), false);
    m.define(
        "def forward(self, x):\n    return torch.linear(x.flatten(1), self.weight, self.bias)\n");
    m.save(path.toStdString());
}

config::ExperimentSpec modelFileSpec(const QString& file) {
    auto spec = *config::preset("default");
    spec.model.name = "torchscript";
    spec.model.file = file.toStdString();
    spec.data.name = "synthetic-images";
    spec.data.channels = 1;
    spec.data.height = spec.data.width = 8;
    return spec;
}

}  // namespace

class EditorTest : public QObject {
    Q_OBJECT
  private Q_SLOTS:
    void modelFileIsCheckedAndShownBesideTheProblems();

    // The check before training waits for a valid spec; a model file that is not there
    // is named at once all the same.
    void aMissingModelFileIsMarkedEvenWhileOtherFieldsAreInvalid() {
        QTemporaryDir dir;
        ExperimentEditor editor;
        auto spec = modelFileSpec(dir.filePath("gone.pt"));
        spec.micro_batch = 0;  // invalid too
        editor.setSpec(spec);
        const QString all = listed(editor).join('\n');
        QVERIFY2(all.contains("gone.pt") && all.contains("no such file"), qPrintable(all));
        QVERIFY(editor.fieldWidget("model.file")->property("invalid").toBool());
        QVERIFY(editor.fieldWidget("micro_batch")->property("invalid").toBool());
        // A folder is no model file either; a training script's file is held to the same.
        spec.model.file = dir.path().toStdString();
        editor.setSpec(spec);
        QVERIFY2(listed(editor).join('\n').contains("is a folder"),
                 qPrintable(listed(editor).join('\n')));
        spec.model.name = "script";
        spec.model.file = dir.filePath("train.py").toStdString();
        editor.setSpec(spec);
        QVERIFY(editor.fieldWidget("model.file")->property("invalid").toBool());
        QVERIFY2(listed(editor).join('\n').contains("no such file"),
                 qPrintable(listed(editor).join('\n')));
    }

    // The facts beside the problems are of the spec shown: a changed model shows none
    // until it is checked, an invalid spec none at all.
    void theSetupPanelForgetsThePreviousModelWhenItChangesOrTurnsInvalid() {
        ExperimentEditor editor;
        QSignalSpy checked(&editor, &ExperimentEditor::setupChecked);
        auto spec = *config::preset("default");
        spec.data.name = "synthetic-images";
        spec.model.name = "cnn";
        editor.setSpec(spec);
        QTRY_VERIFY_WITH_TIMEOUT(!editor.checking() && !checked.isEmpty(), kUiPatienceMs);
        QVERIFY2(editor.setupPanel()->factsText().contains("cnn"),
                 qPrintable(editor.setupPanel()->factsText()));
        // Invalid: nothing is checked, and the cnn's facts are gone.
        spec.model.width = -3;
        editor.setSpec(spec);
        QVERIFY(!editor.isValid());
        QVERIFY2(!editor.setupPanel()->factsText().contains("cnn"),
                 qPrintable(editor.setupPanel()->factsText()));
        QTest::qWait(600);  // past the pause a check waits for
        QVERIFY(!editor.checking());
        QVERIFY(editor.setupPanel()->factsText().isEmpty());
        QCOMPARE(editor.setupPanel()->moduleTree()->topLevelItemCount(), 1);  // "(not checked)"
        // Another model: the cnn's facts go at once, the mlp's come with its check.
        spec.model.width = 16;
        spec.model.name = "mlp";
        checked.clear();
        editor.setSpec(spec);
        QVERIFY2(!editor.setupPanel()->factsText().contains("cnn"),
                 qPrintable(editor.setupPanel()->factsText()));
        QTRY_VERIFY_WITH_TIMEOUT(!editor.checking() && !checked.isEmpty(), kUiPatienceMs);
        QVERIFY2(editor.setupPanel()->factsText().contains("mlp"),
                 qPrintable(editor.setupPanel()->factsText()));
    }

    void defaultPresetIsValidAndRunnable() {
        test::Workspace ws;
        QVERIFY(ws.open());
        ExperimentEditor* editor = ws.window->editor();
        QVERIFY(editor->isValid());
        QCOMPARE(editor->spec(), *config::preset("default"));
        QVERIFY(ws.window->runAction()->isEnabled());
        QVERIFY(!ws.window->cancelAction()->isEnabled());
    }

    // The ranks column says what the machine offers, and an arm that asks for more
    // than it has is a problem naming the arm, its ranks and what is there.
    // A laptop's 1280x720 and a smaller 1024x700: the form's groups sit inside the
    // window, two columns where three do not fit, three again when it is wide.
    void theFormFitsALaptopScreen() {
        ExperimentEditor editor;
        auto* form = editor.findChild<SpecForm*>();
        QVERIFY(form);
        for (const QSize size : {QSize(1280, 720), QSize(1024, 700), QSize(1900, 1000)}) {
            editor.resize(size);
            editor.show();
            QVERIFY(QTest::qWaitForWindowExposed(&editor));
            auto* viewport = form->parentWidget();  // the scroll area's viewport
            QTRY_VERIFY2(form->compact() == (viewport->width() < form->wideWidth()),
                         qPrintable(QStringLiteral("viewport %1 px, three columns need %2 px")
                                        .arg(viewport->width())
                                        .arg(form->wideWidth())));
            QTRY_VERIFY2(form->width() <= viewport->width(),
                         qPrintable(QStringLiteral("form %1 px in a viewport of %2 px at %3 px")
                                        .arg(form->width())
                                        .arg(viewport->width())
                                        .arg(size.width())));
            for (auto* box : form->findChildren<QGroupBox*>()) {
                QVERIFY2(box->geometry().right() <= form->width(),
                         qPrintable(box->title() + QStringLiteral(" reaches past the form")));
            }
        }
        QVERIFY(!form->compact());  // 1900 px: three columns
    }

    void ranksAreCheckedAgainstTheMachine() {
        ExperimentEditor editor;
        auto spec = *config::preset("default");
        spec.device = config::DeviceKind::Cpu;
        spec.arms[1].ranks = 3;
        editor.setSpec(spec);
        const int column = ArmsTableModel::columnOf("ranks");
        QVERIFY(column >= 0);
        const QString tip =
            editor.armsModel()->headerData(column, Qt::Horizontal, Qt::ToolTipRole).toString();
        QVERIFY2(tip.contains("this machine: the CPU"), qPrintable(tip));
        QVERIFY2(editor.isValid() == parallel::glooAvailable(),
                 qPrintable(listed(editor).join('\n')));
        spec.device = config::DeviceKind::Cuda;
        editor.setSpec(spec);
        if (!probe::cudaAvailable() || !parallel::ncclAvailable()) {
            QVERIFY(!editor.isValid());
            QVERIFY2(anyContains(listed(editor), "ranks"), qPrintable(listed(editor).join('\n')));
            QVERIFY(!editor.armsModel()->cellErrors(1, column).isEmpty());
        }
    }

    void invalidMicroBatchDisablesRunAndSaysWhy() {
        test::Workspace ws;
        QVERIFY(ws.open());
        ExperimentEditor* editor = ws.window->editor();
        auto* microBatch = qobject_cast<QSpinBox*>(editor->fieldWidget("micro_batch"));
        QVERIFY(microBatch);
        microBatch->setValue(0);

        QVERIFY(!editor->isValid());
        QVERIFY(!ws.window->runAction()->isEnabled());
        QVERIFY(!ws.window->runExperiment());
        QVERIFY2(anyContains(listed(*editor), "Micro-batch = 0: must be between 1 and"),
                 qPrintable(listed(*editor).join('\n')));
        QVERIFY(microBatch->property("invalid").toBool());
        QVERIFY(microBatch->toolTip().contains("Micro-batch = 0"));
        auto* mark = microBatch->findChild<QWidget*>("invalidMark");
        QVERIFY(mark && mark->isVisibleTo(microBatch));

        microBatch->setValue(32);  // fixing it clears the mark and enables Run again
        QVERIFY(editor->isValid());
        QVERIFY(ws.window->runAction()->isEnabled());
        QVERIFY(!microBatch->property("invalid").toBool());
        QVERIFY(!mark->isVisibleTo(microBatch));
    }

    // Every problem names its field by the label the form shows, the experiment's as
    // an arm's: no JSON key beside a label.
    void problemsNameEveryFieldByItsLabel() {
        ExperimentEditor editor;
        config::ExperimentSpec spec = editor.spec();
        spec.micro_steps = -5;
        spec.model.width = -3;
        spec.arms[0].accumulation = 0;
        editor.setSpec(spec);
        const QStringList errors = listed(editor);
        const QString steps = QString::fromUtf8(
            config::findField<config::ExperimentSpec>("micro_steps")->info->label);
        QVERIFY2(anyContains(errors, steps + " = -5:"), qPrintable(errors.join('\n')));
        QVERIFY2(anyContains(errors, "Model \u203a Width = -3:"), qPrintable(errors.join('\n')));
        QVERIFY2(anyContains(errors, "Accumulation K = 0"), qPrintable(errors.join('\n')));
        for (const char* key : {"micro_steps", "model.width", "accumulation"}) {
            QVERIFY2(!anyContains(errors, QString::fromUtf8(key) + " ="), key);
        }
    }

    void unparsableNumberIsAnError() {
        ExperimentEditor editor;
        auto* lr = qobject_cast<QLineEdit*>(editor.fieldWidget("optimizer.lr"));
        QVERIFY(lr);
        QTest::keyClicks(lr, "x");  // "0.05x"
        QVERIFY(!editor.isValid());
        QVERIFY(anyContains(listed(editor),
                            "Optimizer \u203a Learning rate = \"0.05x\": must be a number"));
        lr->clear();
        QTest::keyClicks(lr, "0.1");
        QVERIFY(editor.isValid());
        QCOMPARE(editor.spec().optimizer.lr, 0.1);
    }

    void badArmCellIsMarked() {
        ExperimentEditor editor;
        ArmsTableModel* arms = editor.armsModel();
        QVERIFY(arms->setData(arms->index(2, ArmsTableModel::columnOf("accumulation")), 0,
                              Qt::EditRole));
        QVERIFY(!editor.isValid());
        // The cell's tooltip and the list name the arm by its name and row, never arms[2].
        QVERIFY(anyContains(arms->cellErrors(2, ArmsTableModel::columnOf("accumulation")),
                            "Arm \u201c"
                            "amp-accum4\u201d (row 3), Accumulation K = 0"));
        QVERIFY2(anyContains(listed(editor),
                             "Arm \u201c"
                             "amp-accum4\u201d (row 3), Accumulation K = 0"),
                 qPrintable(listed(editor).join('\n')));
        QVERIFY(
            arms->setData(arms->index(1, ArmsTableModel::columnOf("name")), "fp32", Qt::EditRole));
        QVERIFY2(anyContains(listed(editor),
                             "Arm \u201c"
                             "fp32\u201d (row 2), Name = \"fp32\": row 1 has this "
                             "name too"),
                 qPrintable(listed(editor).join('\n')));
        QVERIFY2(!anyContains(listed(editor), "arms["), qPrintable(listed(editor).join('\n')));
        arms->setData(arms->index(1, ArmsTableModel::columnOf("name")), "amp", Qt::EditRole);
        QVERIFY(arms->index(2, ArmsTableModel::columnOf("accumulation"))
                    .data(Qt::BackgroundRole)
                    .isValid());
        QVERIFY(!arms->index(1, ArmsTableModel::columnOf("accumulation"))
                     .data(Qt::BackgroundRole)
                     .isValid());
        arms->setData(arms->index(2, ArmsTableModel::columnOf("accumulation")), 4, Qt::EditRole);
        QVERIFY(editor.isValid());
    }

    // "off" means no clipping in the grad-clip column only; numbers may carry spaces.
    void numberCellsParseOffAndSpaces() {
        ExperimentEditor editor;
        ArmsTableModel* arms = editor.armsModel();
        QVERIFY(arms->setData(arms->index(0, ArmsTableModel::columnOf("grad_clip")), " 1.5 ",
                              Qt::EditRole));
        QCOMPARE(arms->arms()[0].grad_clip, 1.5);
        QVERIFY(arms->setData(arms->index(0, ArmsTableModel::columnOf("grad_clip")), "OFF",
                              Qt::EditRole));
        QCOMPARE(arms->arms()[0].grad_clip, 0.0);
        QVERIFY(!arms->setData(arms->index(0, ArmsTableModel::columnOf("scaler.init_scale")), "off",
                               Qt::EditRole));
        QCOMPARE(arms->arms()[0].scaler.init_scale, 65536.0);
        QVERIFY(!arms->setData(arms->index(0, ArmsTableModel::columnOf("grad_clip")), "abc",
                               Qt::EditRole));
        QCOMPARE(arms->arms()[0].grad_clip, 0.0);
    }

    void armsAddDuplicateRemove() {
        ExperimentEditor editor;
        ArmsTableModel* arms = editor.armsModel();
        QCOMPARE(arms->rowCount(), 3);
        arms->duplicateArm(0);
        QCOMPARE(arms->rowCount(), 4);
        QCOMPARE(arms->arms()[1].name, std::string("fp32-copy"));
        QVERIFY(editor.isValid());
        arms->addArm();
        QCOMPARE(editor.spec().arms.size(), size_t(5));
        while (arms->rowCount() > 0) {
            arms->removeArm(0);
        }
        QVERIFY(!editor.isValid());
        QVERIFY(anyContains(listed(editor), "arms = []: must have at least one arm"));
    }

    // Remove offers Undo, which brings the arm back where it was, with its settings.
    void aRemovedArmCanBeBroughtBack() {
        ExperimentEditor editor;
        ArmsTableModel* arms = editor.armsModel();
        const config::ExperimentSpec before = editor.spec();
        const std::string second = arms->arms()[1].name;
        QVERIFY(!editor.canUndoPreset());
        QVERIFY(editor.removeArm(1));
        QCOMPARE(arms->rowCount(), 2);
        QVERIFY(editor.canUndoPreset());
        QVERIFY(editor.findChild<QPushButton*>("undoPreset")->isVisibleTo(&editor));
        QVERIFY(editor.undoPreset());
        QCOMPARE(editor.spec(), before);
        QCOMPARE(arms->arms()[1].name, second);
        QVERIFY(!editor.canUndoPreset());
        // An edit after the removal forgets the undo.
        QVERIFY(editor.removeArm(0));
        arms->addArm();
        QVERIFY(!editor.canUndoPreset());
        QVERIFY(!editor.removeArm(7));
    }

    // The model's tree stays when a check finds no model (it said why it is empty):
    // hiding it moved the form above it under the pointer.
    void theFormStaysPutWhenTheModelTreeEmpties() {
        ExperimentEditor editor;
        editor.resize(1024, 600);
        editor.show();
        QVERIFY(QTest::qWaitForWindowExposed(&editor));
        QTRY_VERIFY_WITH_TIMEOUT(!editor.checking(), kUiPatienceMs);  // its own check is done
        train::SetupReport good;
        good.model = "built-in cnn";
        good.module_tree = {"(model)  Cnn  19562", "features  Sequential  288"};
        editor.setupPanel()->showReport(good);
        QTest::qWait(50);
        QWidget* field = editor.fieldWidget("name");
        const QPoint at = field->mapTo(&editor, QPoint(0, 0));
        const int treeHeight = editor.setupPanel()->moduleTree()->height();
        train::SetupReport none;
        none.problems.push_back(
            {train::SetupProblem::Kind::Unreadable, "model.file", "model.pt: no such file"});
        editor.setupPanel()->showReport(none);
        QTest::qWait(50);
        QCOMPARE(field->mapTo(&editor, QPoint(0, 0)), at);
        QVERIFY(editor.setupPanel()->moduleTree()->isVisible());
        QCOMPARE(editor.setupPanel()->moduleTree()->height(), treeHeight);
        QCOMPARE(editor.setupPanel()->moduleTree()->topLevelItemCount(), 1);  // "(no model built)"
        QVERIFY(editor.setupPanel()->moduleTree()->topLevelItem(0)->text(0).contains("no model"));
        QCOMPARE(editor.setupPanel()->moduleTree()->topLevelItem(0)->flags(), Qt::NoItemFlags);
    }

    void jsonWithErrorsLoadsWhatItCanAndMarksFields() {
        ExperimentEditor editor;
        const QString json = R"({"name": "from-file", "micro_batch": "many",
            "model": {"name": "mlp", "width": -3}, "steps": 100,
            "arms": [{"name": "a", "precision": "fp4"}, {"name": "b", "accumulation": 2}]})";
        QString problem;
        QVERIFY(editor.loadJson(json, &problem));
        const config::ExperimentSpec spec = editor.spec();
        QCOMPARE(spec.name, std::string("from-file"));
        QCOMPARE(spec.model.name, std::string("mlp"));
        QCOMPARE(spec.micro_steps, int64_t(100));
        QCOMPARE(spec.arms.size(), size_t(2));
        QVERIFY(!editor.isValid());
        const QStringList errors = listed(editor);
        QVERIFY2(anyContains(errors, "Micro-batch"), qPrintable(errors.join('\n')));
        QVERIFY(anyContains(errors, "Model \u203a Width = -3"));
        // An arm's problem names the arm and its row, and the field by its label.
        QVERIFY2(anyContains(errors, "Arm \u201ca\u201d (row 1), Precision = \"fp4\""),
                 qPrintable(errors.join('\n')));
        QVERIFY(editor.fieldWidget("micro_batch")->property("invalid").toBool());
        QVERIFY(editor.fieldWidget("model.width")->property("invalid").toBool());
        QVERIFY(
            !editor.armsModel()->cellErrors(0, ArmsTableModel::columnOf("precision")).isEmpty());

        // Editing a field the file got wrong clears the file's complaint about it.
        auto* microBatch = qobject_cast<QSpinBox*>(editor.fieldWidget("micro_batch"));
        microBatch->setValue(16);
        QVERIFY(!editor.fieldWidget("micro_batch")->property("invalid").toBool());
        qobject_cast<QSpinBox*>(editor.fieldWidget("model.width"))->setValue(64);
        editor.armsModel()->setData(
            editor.armsModel()->index(0, ArmsTableModel::columnOf("precision")), "amp",
            Qt::EditRole);
        QVERIFY2(editor.isValid(), qPrintable(listed(editor).join('\n')));
    }

    // An arm the file holds as something other than an object is left out; the
    // arms after it are named and marked in the rows they load into.
    void jsonArmLeftOutShiftsTheRowsNamed() {
        ExperimentEditor editor;
        QString problem;
        QVERIFY(editor.loadJson(R"({"arms": [7, {"name": "b", "precision": "fp4"}]})", &problem));
        QCOMPARE(editor.spec().arms.size(), size_t(1));
        const QStringList errors = listed(editor);
        QVERIFY2(anyContains(errors,
                             "Arm \u201c"
                             "b\u201d (row 1), Precision = \"fp4\""),
                 qPrintable(errors.join('\n')));
        QVERIFY2(anyContains(errors, "Arm 1 in the file (not loaded) = 7: expected an object"),
                 qPrintable(errors.join('\n')));
        QVERIFY(
            !editor.armsModel()->cellErrors(0, ArmsTableModel::columnOf("precision")).isEmpty());
    }

    // Choosing a preset shows it at once. Replacing an edited spec offers Undo,
    // which brings the edits back; the next edit withdraws the offer.
    void presetChoiceAppliesAtOnceWithUndo() {
        ExperimentEditor editor;
        auto* combo = editor.findChild<QComboBox*>("preset");
        auto* undo = editor.findChild<QPushButton*>("undoPreset");
        QVERIFY(combo && undo);
        const auto names = config::presetNames();
        QCOMPARE(combo->currentText(), QString("default"));
        QTest::keyClick(combo, Qt::Key_Down);  // the next preset, by keyboard
        QCOMPARE(combo->currentText(), QString::fromStdString(names[1]));
        QCOMPARE(editor.spec(), *config::preset(names[1]));
        QVERIFY(!editor.canUndoPreset());  // nothing edited was replaced

        auto* microBatch = qobject_cast<QSpinBox*>(editor.fieldWidget("micro_batch"));
        QVERIFY(microBatch);
        microBatch->setValue(7);
        const config::ExperimentSpec edited = editor.spec();
        QCOMPARE(edited.micro_batch, 7);
        const int smoke = combo->findText("smoke");
        QVERIFY(smoke >= 0);
        combo->setCurrentIndex(smoke);
        Q_EMIT combo->activated(smoke);
        QCOMPARE(editor.spec(), *config::preset("smoke"));
        QVERIFY(editor.canUndoPreset());
        QVERIFY(!undo->isHidden());
        QTest::mouseClick(undo, Qt::LeftButton);
        QCOMPARE(editor.spec(), edited);
        QVERIFY(!editor.canUndoPreset());

        // The edits brought back are still edits: another preset offers Undo again,
        // until the next edit.
        QVERIFY(editor.loadPreset("default"));
        QVERIFY(editor.canUndoPreset());
        microBatch->setValue(9);
        QVERIFY(!editor.canUndoPreset());
        QVERIFY(!editor.undoPreset());
        QCOMPARE(editor.spec().micro_batch, 9);
    }

    // The FP8 recipe's cells are for fp8 arms: greyed elsewhere with the reason, and the
    // history greyed under current scaling, which keeps none.
    void fp8CellsAreForFp8ArmsOnly() {
        config::ExperimentSpec spec = *config::preset("smoke");
        config::ArmSpec fp8{"fp8", config::Precision::Fp8};
        config::ArmSpec now = fp8;
        now.name = "fp8-now";
        now.fp8_recipe = config::Fp8Recipe::Current;
        spec.arms = {{"bf16", config::Precision::AmpBf16}, fp8, now};
        ExperimentEditor editor;
        editor.setSpec(spec);
        ArmsTableModel* arms = editor.armsModel();
        const int recipe = ArmsTableModel::columnOf("fp8_recipe");
        const int history = ArmsTableModel::columnOf("fp8_history");
        const int margin = ArmsTableModel::columnOf("fp8_margin");
        QVERIFY(recipe >= 0 && history >= 0 && margin >= 0);
        auto enabled = [&](int row, int column) {
            return arms->flags(arms->index(row, column)).testFlag(Qt::ItemIsEnabled);
        };
        auto tip = [&](int row, int column) {
            return arms->index(row, column).data(Qt::ToolTipRole).toString();
        };
        QVERIFY(!enabled(0, recipe) && !enabled(0, history) && !enabled(0, margin));
        QVERIFY2(tip(0, recipe).contains("runs amp-bf16"), qPrintable(tip(0, recipe)));
        QVERIFY(enabled(1, recipe) && enabled(1, history) && enabled(1, margin));
        QVERIFY(enabled(2, recipe) && !enabled(2, history) && enabled(2, margin));
        QVERIFY2(tip(2, history).contains("current scaling"), qPrintable(tip(2, history)));
    }

    // The loss scaler's cells do nothing for an arm without a scaler: greyed, not
    // editable, and their tooltip says why. amp has one on CUDA only.
    void scalerCellsDisabledForArmsWithoutAScaler() {
        config::ExperimentSpec spec = *config::preset("default");  // fp32, amp, amp-accum4
        spec.device = config::DeviceKind::Cpu;
        config::ArmSpec fp16;
        fp16.name = "fp16";
        fp16.precision = config::Precision::AmpFp16;
        config::ArmSpec noscale = fp16;
        noscale.name = "noscale";
        noscale.loss_scaling = false;
        spec.arms.push_back(fp16);     // row 3
        spec.arms.push_back(noscale);  // row 4
        ExperimentEditor editor;
        editor.setSpec(spec);
        ArmsTableModel* arms = editor.armsModel();
        const int init = ArmsTableModel::columnOf("scaler.init_scale");
        const int interval = ArmsTableModel::columnOf("scaler.growth_interval");
        const int scaling = ArmsTableModel::columnOf("loss_scaling");
        auto enabled = [&](int row, int column) {
            return arms->flags(arms->index(row, column)).testFlag(Qt::ItemIsEnabled);
        };
        auto tip = [&](int row, int column) {
            return arms->index(row, column).data(Qt::ToolTipRole).toString();
        };
        QVERIFY(!enabled(0, init) && !enabled(0, interval) && !enabled(0, scaling));
        QVERIFY(!arms->flags(arms->index(0, init)).testFlag(Qt::ItemIsEditable));
        QVERIFY2(tip(0, init).contains("runs fp32, without a loss scaler"),
                 qPrintable(tip(0, init)));
        QVERIFY(!enabled(1, init));  // amp on the CPU is bf16
        QVERIFY2(tip(1, init).contains("bf16"), qPrintable(tip(1, init)));
        QVERIFY(enabled(3, init) && enabled(3, interval) && enabled(3, scaling));
        QVERIFY(arms->flags(arms->index(3, init)).testFlag(Qt::ItemIsEditable));
        QVERIFY(tip(3, init).isEmpty());
        QVERIFY(!enabled(4, init) && enabled(4, scaling));  // fp16, loss scaling off
        QVERIFY2(tip(4, init).contains("loss scaling is off"), qPrintable(tip(4, init)));
        QVERIFY(enabled(0, ArmsTableModel::columnOf("accumulation")));

        // On CUDA, amp is fp16 with a scaler.
        qobject_cast<QComboBox*>(editor.fieldWidget("device"))->setCurrentText("cuda");
        QVERIFY(editor.spec().device == config::DeviceKind::Cuda);
        QVERIFY(enabled(1, init) && enabled(2, interval));
        QVERIFY(!enabled(0, init));

        // A bad value in an unused cell stays editable, so it can be fixed.
        spec.arms[0].scaler.init_scale = -1;
        editor.setSpec(spec);
        QVERIFY(!editor.isValid());
        QVERIFY(enabled(0, init));
        QVERIFY(!enabled(0, interval));
    }

    // An arm whose K does not divide the micro-steps is a warning: listed after the
    // problems, naming the arm, while the experiment stays runnable.
    void accumulationWarningIsListedAndRunStaysEnabled() {
        test::Workspace ws;
        QVERIFY(ws.open());
        ExperimentEditor* editor = ws.window->editor();
        auto* steps = qobject_cast<QSpinBox*>(editor->fieldWidget("micro_steps"));
        QVERIFY(steps);
        QVERIFY(editor->warnings().empty());
        steps->setValue(602);
        QVERIFY(editor->isValid());
        QVERIFY(ws.window->runAction()->isEnabled());
        QCOMPARE(editor->warnings().size(), size_t(1));
        const QString expected =
            "Warning: Arm \u201c"
            "amp-accum4\u201d (row 3), Accumulation K = 4: does not divide "
            "micro_steps (602): the arm makes 150 optimizer steps of 4 micro-batches and never "
            "trains the last 2 micro-batches";
        QVERIFY2(listed(*editor).contains(expected), qPrintable(listed(*editor).join('\n')));
        steps->setValue(600);
        QVERIFY(editor->warnings().empty());
        QVERIFY(!anyContains(listed(*editor), "Warning:"));
    }

    void notJsonKeepsTheEditor() {
        ExperimentEditor editor;
        const config::ExperimentSpec before = editor.spec();
        QString problem;
        QVERIFY(!editor.loadJson("{ not json", &problem));
        QVERIFY(problem.contains("(file)"));
        QCOMPARE(editor.spec(), before);
    }

    void jsonRoundTrip() {
        ExperimentEditor editor;
        config::ExperimentSpec spec = *config::preset("noise-band");
        spec.seeds = {3, 5, 8};
        spec.arms[0].grad_clip = 1.5;
        spec.arms[1].scaler.init_scale = 1024;
        spec.arms[1].cuda_graph = true;
        editor.setSpec(spec);
        QCOMPARE(editor.spec(), spec);
        ExperimentEditor other;
        QString problem;
        QVERIFY(other.loadJson(editor.toJson(), &problem));
        QCOMPARE(other.spec(), spec);
        QVERIFY(other.isValid());
    }

    // The form and the arms table are made from the field table: every field has
    // its widget (named by its path, with its help as tooltip), every arm field
    // its column.
    void everyFieldOfTheTableIsInTheEditor() {
        ExperimentEditor editor;
        for (const auto& f : config::flatFields<config::ExperimentSpec>()) {
            QWidget* w = editor.fieldWidget(f.path);
            QVERIFY2(w, f.path.c_str());
            QCOMPARE(w->objectName(), QString::fromStdString(f.path));
            QVERIFY2(w->toolTip().contains(QString::fromUtf8(f.info->help)), f.path.c_str());
        }
        for (const auto& f : config::flatFields<config::ArmSpec>()) {
            const int column = ArmsTableModel::columnOf(QString::fromStdString(f.path));
            QVERIFY2(column >= 0, f.path.c_str());
            // The help first; the ranks column adds what the machine offers.
            QVERIFY(editor.armsModel()
                        ->headerData(column, Qt::Horizontal, Qt::ToolTipRole)
                        .toString()
                        .startsWith(QString::fromUtf8(f.info->help)));
        }
        QCOMPARE(ArmsTableModel::columns(),
                 static_cast<int>(config::flatFields<config::ArmSpec>().size()));
    }

    void everyPresetIsShownExactly() {
        for (const auto& name : config::presetNames()) {
            ExperimentEditor editor;
            QVERIFY(editor.loadPreset(QString::fromStdString(name)));
            QCOMPARE(editor.spec(), *config::preset(name));
            for (const auto& e : editor.errors()) {
                // A preset for the user's own files names them before they are picked.
                const bool toPick =
                    e.field == "model.file" &&
                    !QFileInfo::exists(QString::fromStdString(config::preset(name)->model.file));
                QVERIFY2(toPick, qPrintable(QString::fromStdString(name + ": " + e.toString())));
            }
        }
    }
};

void EditorTest::modelFileIsCheckedAndShownBesideTheProblems() {
    QTemporaryDir dir;
    const QString good = dir.filePath("good.pt");
    const QString narrow = dir.filePath("narrow.pt");
    saveLinearModel(good, 10);
    saveLinearModel(narrow, 4);  // 10 classes in the data
    ExperimentEditor editor;
    QSignalSpy checked(&editor, &ExperimentEditor::setupChecked);
    editor.setSpec(modelFileSpec(good));
    QVERIFY(checked.wait(20000));
    QTRY_VERIFY_WITH_TIMEOUT(!editor.checking(), kUiPatienceMs);
    QVERIFY2(editor.isValid(), qPrintable(listed(editor).join('\n')));
    const QString facts = editor.setupPanel()->factsText();
    QVERIFY2(facts.contains("good.pt") && facts.contains("Parameters: 650"), qPrintable(facts));
    QVERIFY2(facts.contains("a batch gives [8, 10]"), qPrintable(facts));
    QCOMPARE(editor.setupPanel()->moduleTree()->topLevelItemCount(), 1);
    // The model file has browse buttons; a built-in model's width does not apply.
    QVERIFY(editor.findChild<QToolButton*>("model.file.file"));
    QVERIFY(!editor.fieldWidget("model.width")->isVisibleTo(&editor));
    QVERIFY(editor.fieldWidget("model.file")->isVisibleTo(&editor));

    auto* file = qobject_cast<QLineEdit*>(editor.fieldWidget("model.file"));
    QVERIFY(file);
    file->setText(narrow);
    Q_EMIT file->textEdited(narrow);
    QVERIFY(checked.wait(20000));
    QTRY_VERIFY_WITH_TIMEOUT(!editor.checking(), kUiPatienceMs);
    QVERIFY(!editor.isValid());
    QVERIFY2(anyContains(listed(editor), "labels go up to 9 but the model returns 4 logits"),
             qPrintable(listed(editor).join('\n')));
    QVERIFY(editor.fieldWidget("model.task")->property("invalid").toBool());
}

QTEST_MAIN(EditorTest)
#include "test_ui_editor.moc"
