#pragma once
#include <QList>
#include <QWidget>
#include <functional>

class QComboBox;
class QLineEdit;
class QPlainTextEdit;
class QPushButton;
class QTreeView;

namespace ampbench::ui {

class HistoryFilter;
class RunTreeModel;
class StoreSession;

/// Browses the experiments and runs of the open database: filter by name and
/// status, sort by any column (date by default, newest first), rename an
/// experiment, edit notes, delete with confirmation, show runs in the plots.
class HistoryView : public QWidget {
    Q_OBJECT
  public:
    /// (id, isRun) of the selected row; id 0 when nothing is selected.
    QPair<qint64, bool> selected() const;
    /// The selected experiment, or the experiment of the selected run; 0 when none.
    qint64 selectedExperiment() const;
    /// Asks the user a yes/no question; replaceable so tests need no modal dialog.
    using Confirm = std::function<bool(const QString& title, const QString& question)>;

    HistoryView(RunTreeModel& runs, StoreSession& session, QWidget* parent = nullptr);

    void setConfirm(Confirm confirm) { confirm_ = std::move(confirm); }
    QTreeView* tree() const { return tree_; }
    void setNameFilter(const QString& text);
    void setStatusFilter(const QString& status);  ///< "" = every status

    /// Deletes the selected experiment or run after confirmation; true when done.
    bool deleteSelected();
    /// Asks for a new name of the selected experiment (modal dialog), then renames it.
    void renameSelected();
    /// Asks for new notes of the selected experiment or run (modal dialog), then sets them.
    void editNotes();
    /// What the Rename dialog does with its text: renames experiment `id` to the
    /// trimmed `name`. False for a blank name or when the store refuses (error()).
    bool renameExperiment(qint64 id, const QString& name);
    /// What the Notes dialog does with its text: sets the notes of run or
    /// experiment `id`. False when the store refuses (error()).
    bool setNotes(qint64 id, bool isRun, const QString& notes);

  Q_SIGNALS:
    /// The user asked to see these runs in the plots.
    void showRuns(const QList<qint64>& runIds);
    /// A store operation failed; the message says why.
    void error(const QString& message);

  private:
    void updateButtons();  // and the details of the selected row

    RunTreeModel& runs_;
    StoreSession& session_;
    QLineEdit* name_ = nullptr;
    QComboBox* status_ = nullptr;
    QTreeView* tree_ = nullptr;
    QPlainTextEdit* details_ = nullptr;
    HistoryFilter* filter_ = nullptr;
    QPushButton* show_ = nullptr;
    QPushButton* rename_ = nullptr;
    QPushButton* notes_ = nullptr;
    QPushButton* delete_ = nullptr;
    Confirm confirm_;
};

}  // namespace ampbench::ui
