#pragma once
#include <QList>
#include <QWidget>
#include <functional>

class QAction;
class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QStackedWidget;
class QTableWidget;
class QTimer;
class QTreeView;

namespace ampbench::ui {

class EmptyViewNote;
class HistoryFilter;
class RunTreeModel;
class NumericsHeatmap;
class StoreSession;
class TrashModel;

/// Browses the experiments and runs of the open database: filter by name, label,
/// tag and status, sort by any column (date by default, newest first), rename an
/// experiment or label a run, tag either, edit notes, show runs in the plots, and
/// see the selected row's facts and figures in a table. Delete moves a row to the
/// trash (Undo, Ctrl+Z, brings it back); the Trash view lists what is there to
/// restore, and Empty trash… (after confirmation) is the only permanent delete.
class HistoryView : public QWidget {
    Q_OBJECT
  public:
    /// (id, isRun) of the selected row; id 0 when nothing is selected.
    QPair<qint64, bool> selected() const;
    /// The selected experiment, or the experiment of the selected run; 0 when none
    /// (and in the Trash view, whose rows are never the experiment in view).
    qint64 selectedExperiment() const;
    /// Asks the user a yes/no question; replaceable so tests need no modal dialog.
    using Confirm = std::function<bool(const QString& title, const QString& question)>;

    HistoryView(RunTreeModel& runs, StoreSession& session, QWidget* parent = nullptr);

    void setConfirm(Confirm confirm) { confirm_ = std::move(confirm); }
    /// The tree on show: the history, or the trash in the Trash view.
    QTreeView* tree() const;
    QTableWidget* details() const { return details_; }
    /// The selected run's per-layer numerics (hidden for an experiment).
    NumericsHeatmap* numerics() const { return numerics_; }
    void setNameFilter(const QString& text);      ///< "tag:WORD" for a tag only
    void setStatusFilter(const QString& status);  ///< "" = every status
    /// Shows the trash (true) or the history (false).
    void showTrash(bool trash);
    bool showingTrash() const;

    /// Moves the selected experiment or run to the trash; true when done. A running
    /// or queued run (or an experiment with one) is refused with the reason (error()).
    bool deleteSelected();
    /// Brings back what the last deletes moved to the trash, newest first; false
    /// when there is nothing to undo or the store refuses.
    bool undoDelete();
    /// Restores the row selected in the Trash view; true when done.
    bool restoreSelected();
    /// Erases everything in the trash for good, after confirmation; true when done.
    bool emptyTrash();
    /// Asks for a new name of the selected experiment, or label of the selected run
    /// (modal dialog), then sets it.
    void renameSelected();
    /// Asks for the tags of the selected row (modal dialog, comma-separated), then sets them.
    void editTags();
    /// Asks for new notes of the selected experiment or run (modal dialog), then sets them.
    void editNotes();
    /// What the Rename dialog does with its text: renames experiment `id` to the
    /// trimmed `name`. False for a blank name or when the store refuses (error()).
    bool renameExperiment(qint64 id, const QString& name);
    /// Labels run `id` (blank: no label). False when the store refuses (error()).
    bool setRunLabel(qint64 id, const QString& label);
    /// Sets the tags of run or experiment `id` from comma-separated `text`. False
    /// when a tag is refused (the reason in error()) or the store refuses.
    bool setTags(qint64 id, bool isRun, const QString& text);
    /// What the Notes dialog does with its text: sets the notes of run or
    /// experiment `id`. False when the store refuses (error()).
    bool setNotes(qint64 id, bool isRun, const QString& notes);

  Q_SIGNALS:
    /// The user asked to see these runs in the plots.
    void showRuns(const QList<qint64>& runIds);
    /// A store operation failed; the message says why.
    void error(const QString& message);

  protected:
    /// New colours (View › Colours, the desktop's) reach the details' headings.
    void changeEvent(QEvent* event) override;

  private:
    struct Trashed {
        qint64 id;
        bool isRun;
        QString name;
    };
    void updateButtons();
    /// Why nothing can be written (no database, a read-only one); empty when it can.
    QString writeBlocker() const;
    void updateDetails();
    /// The empty history's note: none recorded yet, or none that the filter lets through.
    void updateTreeNote();
    void refreshTrash();
    void notify(const QString& text, bool undoable);
    QString describe(qint64 id, bool isRun) const;
    bool storeCall(const std::function<void()>& call);

    RunTreeModel& runs_;
    StoreSession& session_;
    TrashModel* trash_ = nullptr;
    QComboBox* mode_ = nullptr;
    QLineEdit* name_ = nullptr;
    QComboBox* status_ = nullptr;
    QStackedWidget* stack_ = nullptr;
    QTreeView* tree_ = nullptr;
    QTreeView* trashTree_ = nullptr;
    QTableWidget* details_ = nullptr;
    EmptyViewNote* treeNote_ = nullptr;  ///< why the history shows no experiment
    NumericsHeatmap* numerics_ = nullptr;
    QTimer* detailsTimer_ = nullptr;
    QString detailsKey_;
    HistoryFilter* filter_ = nullptr;
    QPushButton* show_ = nullptr;
    QPushButton* rename_ = nullptr;
    QPushButton* tags_ = nullptr;
    QPushButton* notes_ = nullptr;
    QPushButton* delete_ = nullptr;
    QPushButton* restore_ = nullptr;
    QPushButton* empty_ = nullptr;
    QLabel* notice_ = nullptr;
    QPushButton* undo_ = nullptr;
    QAction* deleteAction_ = nullptr;  // the Delete key
    QAction* undoAction_ = nullptr;
    QList<Trashed> undoStack_;
    Confirm confirm_;
};

}  // namespace ampbench::ui
