#include "ui/editor/ExperimentEditor.h"

#include <QComboBox>
#include <QEvent>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QScrollArea>
#include <QSignalBlocker>
#include <QSplitter>
#include <QStandardItemModel>
#include <QStyle>
#include <QTableView>
#include <QTimer>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>
#include <nlohmann/json.hpp>
#include <set>

#include "core/config/Presets.h"
#include "core/config/SpecFields.h"
#include "core/config/SpecJson.h"
#include "core/parallel/Machine.h"
#include "core/probe/Environment.h"
#include "core/script/Trainers.h"
#include "core/util/FileKind.h"
#include "ui/ElidingComboBox.h"
#include "ui/editor/ArmsTableModel.h"
#include "ui/editor/ChoiceDelegate.h"
#include "ui/editor/FieldMarks.h"
#include "ui/editor/SetupPanel.h"
#include "ui/editor/SpecForm.h"
#include "ui/editor/WheelGuard.h"

namespace ampbench::ui {
namespace {

/// Marks the preset box's entry for an experiment that matches no preset.
constexpr int kCustomRole = Qt::UserRole + 1;

/// A problem as the editor lists it: an arm's by its name and row and the field's
/// label ("Arm “amp4” (row 3), Accumulation K = 0: ..."), the others by their path.
QString problemText(const config::FieldError& e, const std::vector<config::ArmSpec>& arms) {
    return QString::fromStdString(config::describe(e, arms, /*labels=*/true));
}

/// Whether the spec's device is CUDA, where `amp` is fp16 with a loss scaler.
bool targetsCuda(config::DeviceKind device) {
    if (device == config::DeviceKind::Auto) {
        static const bool cuda = probe::cudaAvailable();  // as train::resolveDevice decides
        return cuda;
    }
    return device == config::DeviceKind::Cuda;
}

/// The colour warnings are listed in: they do not stop a run.
constexpr const char* kWarningColor = "#a65c00";

/// What the background check depends on: the model, the data and the batch.
std::string checkKey(const config::ExperimentSpec& s) {
    const auto j = config::toJson(s);
    return j.at("model").dump() + j.at("data").dump() + std::to_string(s.micro_batch);
}

/// The spec the editor checks: on the CPU (a training run may hold the GPU) with a
/// batch of at most 8 samples, which fits the same shapes.
config::ExperimentSpec checkedSpec(config::ExperimentSpec s) {
    s.device = config::DeviceKind::Cpu;
    s.micro_batch = std::min(s.micro_batch, 8);
    return s;
}

/// Why the model file of a torchscript or script model cannot be read: missing, a
/// folder, a FIFO or device; empty when it is a regular file (or none is named).
std::string modelFileProblem(const config::ExperimentSpec& s) {
    if ((s.model.name != "torchscript" && s.model.name != "script") || s.model.file.empty()) {
        return {};
    }
    if (script::trainsWithScript(s)) {
        return script::scriptFileProblem(s.model.file);  // what the run's own check says
    }
    const util::FileKind kind = util::fileKind(s.model.file);
    if (kind == util::FileKind::Regular) {
        return {};
    }
    if (kind == util::FileKind::Missing) {
        return "no such file";
    }
    return "is " + util::describeFileKind(kind) + ", not a model file";
}

std::vector<config::FieldError> toFieldErrors(const train::SetupReport& report) {
    std::vector<config::FieldError> out;
    for (const auto& p : report.problems) {
        out.push_back({p.field, "", p.message});
    }
    return out;
}

}  // namespace

ExperimentEditor::ExperimentEditor(QWidget* parent) : QWidget(parent) {
    WheelGuard::install();  // before the form's boxes are polished
    auto* layout = new QVBoxLayout(this);

    auto* top = new QHBoxLayout;
    // Its text ends in "…" where the box is narrower ("custom (edited from fashion-…"),
    // and the tooltip has it whole.
    presets_ = new ElidingComboBox;
    presets_->setObjectName("preset");
    for (const auto& name : config::presetNames()) {
        presets_->addItem(QString::fromStdString(name));
        presets_->setItemData(presets_->count() - 1,
                              QString::fromStdString(config::presetDescription(name)),
                              Qt::ToolTipRole);
    }
    presetUndo_ = new QWidget;
    auto* undoRow = new QHBoxLayout(presetUndo_);
    undoRow->setContentsMargins(0, 0, 0, 0);
    presetUndoText_ = new QLabel;
    auto* undo = new QPushButton(tr("Undo"));
    undo->setObjectName("undoPreset");
    undo->setToolTip(tr("Bring back the experiment the preset replaced"));
    undoRow->addWidget(presetUndoText_);
    undoRow->addWidget(undo);
    presetUndo_->hide();
    planLabel_ = new QLabel;
    top->addWidget(new QLabel(tr("Preset:")));
    top->addWidget(presets_);
    top->addWidget(presetUndo_);
    top->addSpacing(24);
    top->addWidget(planLabel_, 1);
    runOn_ = new QComboBox;
    runOn_->setObjectName("runOn");
    runOn_->setToolTip(
        tr("Where the experiment trains: here, or a host of Run › Hosts… "
           "(its runs are followed here as they train)"));
    runOn_->addItem(tr("this machine"));
    connect(runOn_, &QComboBox::currentIndexChanged, this,
            [this] { Q_EMIT runOnChanged(runOn()); });
    top->addWidget(new QLabel(tr("Run on:")));
    top->addWidget(runOn_);
    layout->addLayout(top);

    form_ = new SpecForm;
    auto* formScroll = new QScrollArea;
    formScroll->setWidget(form_);
    formScroll->setWidgetResizable(true);
    formScroll->setFrameShape(QFrame::NoFrame);
    formViewport_ = formScroll->viewport();
    formViewport_->installEventFilter(this);

    auto* armsBox = new QWidget;
    auto* armsLayout = new QVBoxLayout(armsBox);
    armsLayout->setContentsMargins(0, 0, 0, 0);
    auto* armsButtons = new QHBoxLayout;
    auto* add = new QPushButton(tr("Add arm"));
    auto* duplicate = new QPushButton(tr("Duplicate"));
    auto* remove = new QPushButton(tr("Remove"));
    remove->setObjectName("removeArm");
    armsButtons->addWidget(new QLabel(tr("<b>Arms</b> (one run per arm \u00d7 seed)")));
    armsButtons->addStretch(1);
    armsButtons->addWidget(add);
    armsButtons->addWidget(duplicate);
    armsButtons->addWidget(remove);
    armsLayout->addLayout(armsButtons);
    arms_ = new ArmsTableModel(this);
    armsView_ = new QTableView;
    armsView_->setObjectName("arms");
    armsView_->setModel(arms_);
    armsView_->setItemDelegate(new ChoiceDelegate(&ArmsTableModel::choicesOf, armsView_));
    armsView_->setSelectionBehavior(QAbstractItemView::SelectRows);
    armsView_->setSelectionMode(QAbstractItemView::SingleSelection);
    armsView_->setEditTriggers(QAbstractItemView::AllEditTriggers);
    armsView_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    armsView_->horizontalHeader()->setSectionResizeMode(ArmsTableModel::columnOf("name"),
                                                        QHeaderView::Stretch);
    // Three arms show whole at any window height (a laptop's screen showed one);
    // more scroll. The row of scroll bar under the many columns counts too.
    armsView_->setMinimumHeight(armsView_->horizontalHeader()->sizeHint().height() +
                                3 * armsView_->verticalHeader()->defaultSectionSize() +
                                armsView_->style()->pixelMetric(QStyle::PM_ScrollBarExtent) +
                                2 * armsView_->frameWidth());
    armsLayout->addWidget(armsView_);

    errorList_ = new QListWidget;
    errorList_->setObjectName("errors");
    errorList_->setWordWrap(true);  // a message is read whole, not scrolled to
    errorList_->setToolTip(
        tr("Problems that keep the experiment from running, then warnings (which do not); "
           "click one to go to its field"));

    setup_ = new SetupPanel;
    auto* bottom = new QSplitter(Qt::Horizontal);
    bottom->setObjectName("editorBottomSplit");  // named: kept across starts (Settings)
    bottom->setChildrenCollapsible(false);
    bottom->addWidget(errorList_);
    // The model's facts and module tree scroll where the window is short, so that the
    // form above keeps the room (at 1024×700 they held the form to four rows a column).
    auto* setupScroll = new QScrollArea;
    setupScroll->setObjectName("setupScroll");
    setupScroll->setWidget(setup_);
    setupScroll->setWidgetResizable(true);
    setupScroll->setFrameShape(QFrame::NoFrame);
    bottom->addWidget(setupScroll);
    // Still room for a few problems, and the model's first facts, at any window height.
    bottom->setMinimumHeight(7 * fontMetrics().lineSpacing());
    bottom->setStretchFactor(0, 1);
    bottom->setStretchFactor(1, 1);

    auto* split = new QSplitter(Qt::Vertical);
    split->setObjectName("editorSplit");
    // Dragged past a pane's minimum, the divider stops: a collapsed arms table read as
    // gone, and the splitter's sizes are kept across starts.
    split->setChildrenCollapsible(false);
    split->addWidget(formScroll);
    split->addWidget(armsBox);
    split->addWidget(bottom);
    // Room beyond the minimums goes mostly to the form, then to the model's facts and
    // problems; the arms table past three rows only for its scroll.
    split->setStretchFactor(0, 5);
    split->setStretchFactor(1, 1);
    split->setStretchFactor(2, 3);
    layout->addWidget(split, 1);

    connect(presets_, &QComboBox::activated, this, [this](int index) {
        if (!presets_->itemData(index, kCustomRole).toBool()) {
            loadPreset(presets_->itemText(index));
        }
    });
    connect(undo, &QPushButton::clicked, this, &ExperimentEditor::undoPreset);
    connect(add, &QPushButton::clicked, this, [this] {
        arms_->addArm();
        armsView_->selectRow(arms_->rowCount() - 1);
    });
    connect(duplicate, &QPushButton::clicked, this, [this] {
        const int row = selectedArm();
        arms_->duplicateArm(row < 0 ? arms_->rowCount() - 1 : row);
    });
    connect(remove, &QPushButton::clicked, this, [this] { removeArm(selectedArm()); });
    // A module double-clicked in the model's tree becomes an FP32 island of the selected
    // arm (the last one when none is selected).
    connect(setup_, &SetupPanel::moduleChosen, this, [this](const QString& path) {
        const int row = selectedArm() >= 0 ? selectedArm() : arms_->rowCount() - 1;
        if (row < 0) {
            return;
        }
        const QModelIndex cell = arms_->index(row, ArmsTableModel::columnOf("fp32_modules"));
        const QString now = cell.data(Qt::EditRole).toString();
        if (!now.split(';', Qt::SkipEmptyParts).contains(path)) {
            arms_->setData(cell, now.isEmpty() ? path : now + ';' + path, Qt::EditRole);
        }
    });
    connect(form_, &SpecForm::edited, this, [this](const QString& field) {
        forgetPresetUndo();
        forgetLoadErrors(field);
        revalidate();
    });
    connect(arms_, &ArmsTableModel::edited, this, [this](const QString& field) {
        forgetPresetUndo();
        forgetLoadErrors(field);
        revalidate();
    });
    connect(errorList_, &QListWidget::itemActivated, this, [this](QListWidgetItem* item) {
        const std::string field = item->data(Qt::UserRole).toString().toStdString();
        if (QWidget* w = form_->widgetFor(field)) {
            w->setFocus();
        } else if (field.rfind("arms", 0) == 0) {
            if (const auto where = config::armFieldPath(field)) {
                const int column = ArmsTableModel::columnOf(QString::fromStdString(where->field));
                if (column >= 0 && static_cast<int>(where->arm) < arms_->rowCount()) {
                    armsView_->setCurrentIndex(arms_->index(static_cast<int>(where->arm), column));
                }
            }
            armsView_->setFocus();
        }
    });
    connect(errorList_, &QListWidget::itemClicked, errorList_, &QListWidget::itemActivated);

    checkTimer_ = new QTimer(this);
    checkTimer_->setSingleShot(true);
    checkTimer_->setInterval(400);  // a pause in typing
    checkWatcher_ = new QFutureWatcher<train::SetupReport>(this);
    connect(checkTimer_, &QTimer::timeout, this, [this] {
        if (checkWatcher_->isRunning()) {
            checkTimer_->start();  // one check at a time; this one follows
            return;
        }
        checkedKey_ = pendingKey_;
        checkShown_ = false;
        setup_->showChecking();
        checkWatcher_->setFuture(QtConcurrent::run([spec = checkedSpec(pendingSpec_)] {
            // A training script: its file and its interpreter, no batch of ours.
            return script::trainsWithScript(spec) ? script::checkScriptSetup(spec)
                                                  : train::checkSetup(spec, true, false);
        }));
    });
    connect(checkWatcher_, &QFutureWatcher<train::SetupReport>::finished, this,
            &ExperimentEditor::checkFinished);

    loadPreset("default");
}

bool ExperimentEditor::loadPreset(const QString& name) {
    const auto spec = config::preset(name.toStdString());
    if (!spec) {
        return false;
    }
    const config::ExperimentSpec before = this->spec();
    const bool edited = hasShown_ && !(before == shown_);
    const config::ExperimentSpec beforeShown = shown_;
    const std::vector<config::FieldError> beforeLoadErrors = loadErrors_;
    setSpec(*spec);
    presetName_ = name;  // the one edits are made from
    if (edited && !(before == *spec)) {
        undoSpec_ = before;
        undoShown_ = beforeShown;
        undoLoadErrors_ = beforeLoadErrors;
        presetUndoText_->setText(
            tr("Preset \u201c%1\u201d replaced your edited experiment.").arg(name));
        presetUndo_->show();
    }
    return true;
}

QString ExperimentEditor::presetTip(const QString& shown) const {
    return tr("%1\nChoosing a preset replaces the experiment below; edits it replaces can be "
              "brought back with Undo")
        .arg(shown);
}

void ExperimentEditor::showPresetState(const config::ExperimentSpec& s) {
    const QSignalBlocker block(presets_);
    int custom = -1;
    for (int i = 0; i < presets_->count(); ++i) {
        if (presets_->itemData(i, kCustomRole).toBool()) {
            custom = i;
        }
    }
    // The preset the experiment is, if it is one: the one it was made from first.
    QString same;
    if (const auto made = config::preset(presetName_.toStdString()); made && *made == s) {
        same = presetName_;
    }
    for (const auto& name : config::presetNames()) {
        if (same.isEmpty() && *config::preset(name) == s) {
            same = QString::fromStdString(name);
        }
    }
    if (!same.isEmpty()) {
        if (custom >= 0) {
            presets_->removeItem(custom);
        }
        presets_->setCurrentText(same);
        presets_->setToolTip(presetTip(same));
        return;
    }
    const QString text =
        presetName_.isEmpty() ? tr("custom") : tr("custom (edited from %1)").arg(presetName_);
    if (custom < 0) {
        presets_->addItem(text);
        custom = presets_->count() - 1;
        presets_->setItemData(custom, true, kCustomRole);
        presets_->setItemData(custom, tr("The experiment below matches no preset"),
                              Qt::ToolTipRole);
        if (auto* model = qobject_cast<QStandardItemModel*>(presets_->model())) {
            model->item(custom)->setEnabled(false);  // shown, not chosen
        }
    } else {
        presets_->setItemText(custom, text);
    }
    presets_->setCurrentIndex(custom);
    presets_->setToolTip(presetTip(text));
}

bool ExperimentEditor::removeArm(int row) {
    if (row < 0 || row >= arms_->rowCount()) {
        return false;
    }
    const config::ExperimentSpec before = spec();
    const config::ExperimentSpec beforeShown = shown_;
    const std::vector<config::FieldError> beforeLoadErrors = loadErrors_;
    const QString name = QString::fromStdString(arms_->arms()[static_cast<size_t>(row)].name);
    arms_->removeArm(row);  // an edit: forgets any earlier undo
    undoSpec_ = before;
    undoShown_ = beforeShown;
    undoLoadErrors_ = beforeLoadErrors;
    presetUndoText_->setText(tr("Arm \u201c%1\u201d removed.").arg(name));
    presetUndo_->show();
    return true;
}

bool ExperimentEditor::undoPreset() {
    if (!canUndoPreset()) {
        return false;
    }
    setSpec(undoSpec_);
    shown_ = undoShown_;  // the edits brought back are still edits
    loadErrors_ = undoLoadErrors_;
    revalidate();
    return true;
}

bool ExperimentEditor::canUndoPreset() const {
    return !presetUndo_->isHidden();
}

void ExperimentEditor::forgetPresetUndo() {
    presetUndo_->hide();
}

void ExperimentEditor::setSpec(const config::ExperimentSpec& spec) {
    presetName_.clear();  // a preset again only if it equals one
    forgetPresetUndo();
    loadErrors_.clear();
    form_->setSpec(spec);
    arms_->setArms(spec.arms);
    shown_ = this->spec();
    hasShown_ = true;
    revalidate();
}

bool ExperimentEditor::loadJson(const QString& text, QString* problem) {
    std::vector<config::FieldError> errors;
    const config::ExperimentSpec spec = config::specFromJsonText(text.toStdString(), errors);
    for (const auto& e : errors) {
        if (e.field == "(file)") {
            if (problem) {
                *problem = QString::fromStdString(e.toString());
            }
            return false;
        }
    }
    setSpec(spec);
    config::renumberArmsAfterLeftOut(errors);  // to the rows the arms loaded into
    loadErrors_ = errors;
    revalidate();
    return true;
}

QString ExperimentEditor::toJson() const {
    return QString::fromStdString(config::specToJsonText(spec()));
}

config::ExperimentSpec ExperimentEditor::spec() const {
    config::ExperimentSpec s;
    std::vector<config::FieldError> ignored;
    form_->readInto(s, ignored);
    s.arms = arms_->arms();
    return s;
}

QWidget* ExperimentEditor::fieldWidget(const std::string& field) const {
    return form_->widgetFor(field);
}

int ExperimentEditor::selectedArm() const {
    const auto rows = armsView_->selectionModel()->selectedRows();
    return rows.isEmpty() ? -1 : rows.first().row();
}

void ExperimentEditor::forgetLoadErrors(const QString& field) {
    const std::string f = field.toStdString();
    const bool structural = f == "arms";
    loadErrors_.erase(std::remove_if(loadErrors_.begin(), loadErrors_.end(),
                                     [&](const config::FieldError& e) {
                                         if (structural) {
                                             return e.field.rfind("arms", 0) == 0;
                                         }
                                         // "seeds" also clears "seeds[2]"
                                         return e.field == f || e.field.rfind(f + "[", 0) == 0 ||
                                                e.field.rfind(f + ".", 0) == 0;
                                     }),
                      loadErrors_.end());
}

void ExperimentEditor::setRunBlocked(const QString& reason) {
    if (reason == runBlocked_) {
        return;
    }
    runBlocked_ = reason;
    showReadiness();
}

void ExperimentEditor::showReadiness() {
    if (!readyItem_) {
        return;
    }
    if (runBlocked_.isEmpty()) {
        readyItem_->setText(readyNote_ ? tr("No problems: ready to run; note:")
                                       : tr("No problems: ready to run."));
        readyItem_->setForeground(QBrush());
        return;
    }
    // Run is off for a reason outside the spec: "ready to run" beside it misled.
    readyItem_->setText((readyNote_ ? tr("No problems in the spec, but Run is off: %1. Note:")
                                    : tr("No problems in the spec, but Run is off: %1."))
                            .arg(runBlocked_));
    readyItem_->setForeground(QColor(kWarningColor));
}

void ExperimentEditor::revalidate() {
    config::ExperimentSpec s;
    std::vector<config::FieldError> parseErrors;
    form_->readInto(s, parseErrors);
    s.arms = arms_->arms();

    std::set<std::string> unparsed;
    for (const auto& e : parseErrors) {
        unparsed.insert(e.field);
    }
    errors_ = loadErrors_;
    errors_.insert(errors_.end(), parseErrors.begin(), parseErrors.end());
    for (auto& e : config::validate(s)) {
        if (!unparsed.count(e.field)) {  // its value is stale while its text does not parse
            errors_.push_back(std::move(e));
        }
    }
    // The arms' ranks against this machine: GPUs on CUDA, Gloo on the CPU.
    const bool cuda = targetsCuda(s.device);
    static const config::RankCapacity kCpu = parallel::rankCapacity(false);
    static const config::RankCapacity kCuda = parallel::rankCapacity(true);
    const config::RankCapacity& machine = cuda ? kCuda : kCpu;
    arms_->setRanksNote(QString::fromStdString(parallel::describe(machine)));
    for (auto& e : config::checkRanks(s, machine)) {
        errors_.push_back(std::move(e));
    }
    // A model file that is not there is named at once, whatever else is wrong: the
    // check that would find it waits for the other problems.
    if (!unparsed.count("model.file")) {
        if (const std::string why = modelFileProblem(s); !why.empty()) {
            errors_.push_back({"model.file", s.model.file, why});
        }
    }
    if (errors_.empty()) {
        scheduleCheck(s);
        if (checkKey(s) == checkedKey_) {
            errors_.insert(errors_.end(), setupErrors_.begin(), setupErrors_.end());
        }
    } else {
        // What was checked before describes another spec: no facts until it is valid.
        checkTimer_->stop();
        checkedKey_.clear();
        setupErrors_.clear();
        setup_->showNotChecked(tr("checked once the problems are fixed"));
    }

    warnings_ = config::warnings(s);
    arms_->setAmpIsFp16(targetsCuda(s.device));

    auto rest = arms_->setErrors(form_->markErrors(errors_));
    QStringList armsMessages;
    for (const auto& e : rest) {
        if (e.field == "arms") {
            armsMessages << QString::fromStdString(e.toString());
        }
    }
    setFieldMark(armsView_, armsMessages, {});

    readyItem_ = nullptr;
    errorList_->clear();
    for (const auto& e : errors_) {
        auto* item = new QListWidgetItem(problemText(e, s.arms), errorList_);
        item->setData(Qt::UserRole, QString::fromStdString(e.field));
        item->setForeground(QColor(kInvalidColor));
    }
    // A training script is ready once its interpreter imported what it imports.
    const bool awaitingScript = errors_.empty() && script::trainsWithScript(s) && checking();
    // The fast verdict is for CUDA: on the CPU it says what it does instead.
    const bool fastOnCpu = s.fast_verdict && !cuda;
    if (awaitingScript) {
        errorList_->addItem(tr("Checking that %1 imports the modules the script imports\u2026")
                                .arg(QString::fromStdString(script::interpreterFor(s.model))));
    } else if (errors_.empty()) {
        readyItem_ = new QListWidgetItem(errorList_);
        readyNote_ = !warnings_.empty() || fastOnCpu;
        showReadiness();
    }
    if (fastOnCpu) {
        auto* item = new QListWidgetItem(
            tr("Note: Fast verdict is for CUDA. On the CPU it changes nothing: the runs "
               "train one at a time, eagerly, and are timed as they train."),
            errorList_);
        item->setData(Qt::UserRole, QStringLiteral("fast_verdict"));
    }
    for (const auto& w : warnings_) {
        auto* item = new QListWidgetItem(tr("Warning: %1").arg(problemText(w, s.arms)), errorList_);
        item->setData(Qt::UserRole, QString::fromStdString(w.field));
        item->setForeground(QColor(kWarningColor));
    }

    int runs = 0;
    for (const auto& arm : s.arms) {
        runs += static_cast<int>(config::seedsForArm(s, arm).size());
    }
    QString plan =
        awaitingScript ? tr("%n run(s) will train once the script's check answers.", nullptr, runs)
        : errors_.empty()
            ? tr("%n run(s) will train, one at a time.", nullptr, runs)
            : tr("%n problem(s) to fix before running.", nullptr, static_cast<int>(errors_.size()));
    if (!warnings_.empty()) {
        plan += ' ' + tr("%n warning(s) below.", nullptr, static_cast<int>(warnings_.size()));
    }
    planLabel_->setText(plan);

    showPresetState(s);
    const bool valid = errors_.empty();
    Q_EMIT edited();
    if (valid != valid_ || awaitingScript == ready_) {
        valid_ = valid;
        ready_ = !awaitingScript;
        Q_EMIT validityChanged(valid);
    }
}

void ExperimentEditor::scheduleCheck(const config::ExperimentSpec& spec) {
    const std::string key = checkKey(spec);
    if (key == checkedKey_ && !checkTimer_->isActive()) {
        return;
    }
    pendingKey_ = key;
    pendingSpec_ = spec;
    setup_->showChecking();  // the facts shown were of the model or data before
    checkTimer_->start();
}

bool ExperimentEditor::checking() const {
    // Until its result is shown: the future ends on its thread before the watcher says.
    return checkTimer_->isActive() || checkWatcher_->isRunning() || !checkShown_;
}

void ExperimentEditor::checkFinished() {
    checkShown_ = true;
    const train::SetupReport report = checkWatcher_->result();
    if (checkTimer_->isActive() || checkedKey_.empty()) {
        // The spec changed meanwhile (the next check's result is the one to show) or
        // has problems now (nothing is shown until they are fixed).
        return;
    }
    setup_->showReport(report, script::trainsWithScript(pendingSpec_));
    setupErrors_ = toFieldErrors(report);
    revalidate();
    Q_EMIT setupChecked();
}

void ExperimentEditor::showSetupProblems(const train::SetupReport& report) {
    checkTimer_->stop();
    checkedKey_ = checkKey(spec());
    setup_->showReport(report, script::trainsWithScript(spec()));
    setupErrors_ = toFieldErrors(report);
    revalidate();
}

void ExperimentEditor::setHosts(const QStringList& labels, const QString& current) {
    const QSignalBlocker block(runOn_);
    while (runOn_->count() > 1) {
        runOn_->removeItem(1);
    }
    runOn_->addItems(labels);
    const int at = current.isEmpty() ? 0 : static_cast<int>(labels.indexOf(current)) + 1;
    runOn_->setCurrentIndex(std::max(at, 0));
}

bool ExperimentEditor::eventFilter(QObject* watched, QEvent* event) {
    if (watched == formViewport_ && event->type() == QEvent::Resize) {
        // The three columns side by side while they fit, else two.
        form_->setCompact(formViewport_->width() < form_->wideWidth());
    }
    return QWidget::eventFilter(watched, event);
}

QString ExperimentEditor::runOn() const {
    return runOn_->currentIndex() <= 0 ? QString() : runOn_->currentText();
}

void ExperimentEditor::setRunOn(const QString& label) {
    const int at = runOn_->findText(label);
    runOn_->setCurrentIndex(label.isEmpty() || at < 1 ? 0 : at);
}

}  // namespace ampbench::ui
