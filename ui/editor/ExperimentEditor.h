#pragma once
#include <QFutureWatcher>
#include <QString>
#include <QWidget>
#include <vector>

#include "core/train/SetupCheck.h"

#include "core/config/ExperimentSpec.h"
#include "core/config/Validation.h"

class QComboBox;
class QLabel;
class QListWidget;
class QListWidgetItem;
class QTableView;
class QTimer;

namespace ampbench::ui {

class ArmsTableModel;
class SetupPanel;
class SpecForm;

/// Edits a whole experiment: the spec's fields, its arms, and the problems
/// config::validate() finds in them after every edit. Fields named by a problem
/// are marked where they are shown, and the list under the form names them all,
/// followed by config::warnings() (which do not stop a run). Choosing a preset
/// shows it at once; when it replaces an edited spec, Undo brings that back.
/// When the model or the data change, the check before training runs in the
/// background (on the CPU, one small batch): its problems join the list and mark
/// their fields, and the panel beside the list shows what the model and data are.
class ExperimentEditor : public QWidget {
    Q_OBJECT
  public:
    explicit ExperimentEditor(QWidget* parent = nullptr);

    /// Shows `spec` and forgets problems from an earlier file.
    void setSpec(const ampbench::config::ExperimentSpec& spec);
    /// Shows a built-in experiment; false for an unknown name. When it replaces a
    /// spec edited since it was shown, Undo is offered until the next edit.
    bool loadPreset(const QString& name);
    /// Brings back the spec the last preset replaced, or the arm last removed; false
    /// when none is kept.
    bool undoPreset();
    /// Whether Undo of the last preset or arm removal is offered (until the next edit).
    bool canUndoPreset() const;
    /// Removes the arm at `row` (Remove), offering Undo; false for no such row.
    bool removeArm(int row);
    /// Shows what parses of a JSON spec and marks each field the file got wrong
    /// until it is edited. False (contents unchanged) when the text is not JSON;
    /// `problem` then says why.
    bool loadJson(const QString& text, QString* problem);
    QString toJson() const;

    /// The spec as shown; fields whose text does not parse keep their last value.
    ampbench::config::ExperimentSpec spec() const;
    /// Every problem shown, in the order of the list.
    const std::vector<ampbench::config::FieldError>& errors() const { return errors_; }
    bool isValid() const { return errors_.empty(); }
    /// Valid, and for a training script its interpreter's check has answered: Run is
    /// offered once the modules the script imports are known to import.
    bool readyToRun() const { return isValid() && ready_; }
    /// Why Run is off however valid the spec is (no database, a read-only one, an
    /// experiment training); empty when nothing outside the spec stops it. The
    /// problems list says it in place of "ready to run".
    void setRunBlocked(const QString& reason);
    QString runBlocked() const { return runBlocked_; }
    /// What the spec does that its author may not expect (config::warnings()).
    const std::vector<ampbench::config::FieldError>& warnings() const { return warnings_; }

    /// For tests and the error list: the form widget of a field path.
    QWidget* fieldWidget(const std::string& field) const;
    QListWidget* errorList() const { return errorList_; }
    ArmsTableModel* armsModel() const { return arms_; }
    SetupPanel* setupPanel() const { return setup_; }
    /// Shows the problems of a full check (the training worker's) on their fields.
    void showSetupProblems(const ampbench::train::SetupReport& report);
    /// Whether a background check is queued or running.
    bool checking() const;

    /// "Run on": this machine, then the hosts' labels; `current` is selected (empty:
    /// this machine).
    void setHosts(const QStringList& labels, const QString& current);
    /// The host's label the experiment runs on; empty for this machine.
    QString runOn() const;
    void setRunOn(const QString& label);
    QComboBox* runOnBox() const { return runOn_; }

  Q_SIGNALS:
    void validityChanged(bool valid);
    void edited();
    /// A background check of the model and data finished and is shown.
    void setupChecked();
    /// Another place to run was chosen (its label; empty: this machine).
    void runOnChanged(const QString& label);

  protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

  private:
    void revalidate();
    /// The problems list's line for a spec without problems: ready to run, or why not.
    void showReadiness();
    /// The preset box on the preset `s` is, else on "custom (edited from …)".
    void showPresetState(const ampbench::config::ExperimentSpec& s);
    void forgetPresetUndo();
    /// The preset box's tooltip: the text it shows, whole, and what choosing one does.
    QString presetTip(const QString& shown) const;
    void forgetLoadErrors(const QString& field);
    int selectedArm() const;
    /// Starts a check when the model or data changed since the last one.
    void scheduleCheck(const ampbench::config::ExperimentSpec& spec);
    void checkFinished();

    SpecForm* form_ = nullptr;
    QWidget* formViewport_ = nullptr;  // the form's scroll area: its width picks the columns
    ArmsTableModel* arms_ = nullptr;
    QTableView* armsView_ = nullptr;
    QListWidget* errorList_ = nullptr;
    QListWidgetItem* readyItem_ = nullptr;  // "No problems: ready to run" (owned by the list)
    bool readyNote_ = false;                // notes follow that line
    QString runBlocked_;
    QLabel* planLabel_ = nullptr;
    QComboBox* presets_ = nullptr;
    QString presetName_;  // the preset last chosen; empty after a spec set whole
    QComboBox* runOn_ = nullptr;
    std::vector<ampbench::config::FieldError> loadErrors_;  // from the last file, until edited
    std::vector<ampbench::config::FieldError> errors_;      // everything shown now
    std::vector<ampbench::config::FieldError> warnings_;    // shown after the errors
    QWidget* presetUndo_ = nullptr;                         // "… replaced your edits [Undo]"
    QLabel* presetUndoText_ = nullptr;
    bool hasShown_ = false;                   // a spec was shown (the first preset replaces none)
    ampbench::config::ExperimentSpec shown_;  // as last loaded: edited when spec() differs
    ampbench::config::ExperimentSpec undoSpec_;   // what the last preset replaced
    ampbench::config::ExperimentSpec undoShown_;  // ... and the spec it was loaded as
    std::vector<ampbench::config::FieldError> undoLoadErrors_;
    bool valid_ = true;
    bool ready_ = true;
    bool checkShown_ = true;  // the last check started has been heard
    SetupPanel* setup_ = nullptr;
    QTimer* checkTimer_ = nullptr;
    QFutureWatcher<ampbench::train::SetupReport>* checkWatcher_ = nullptr;
    std::string checkedKey_;  // model, data and batch of the last check started
    std::string pendingKey_;  // ... of the check the timer will start
    ampbench::config::ExperimentSpec pendingSpec_;
    std::vector<ampbench::config::FieldError> setupErrors_;  // of the last check
};

}  // namespace ampbench::ui
