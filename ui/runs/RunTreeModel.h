#pragma once
#include <QHash>
#include <QList>
#include <QSet>
#include <QStandardItemModel>
#include <QTimer>
#include <vector>

namespace ampbench::store {
class Database;
struct RunRow;
}  // namespace ampbench::store

namespace ampbench::ui {

/// Experiments and their runs as a tree, shared by the history browser and the
/// run picker; rows in the trash are not in it. A run's check box means "shown in the plots and the
/// summary". Refreshing updates rows in place, so selections, expansion and check boxes survive the
/// live updates. GUI thread only.
class RunTreeModel : public QStandardItemModel {
    Q_OBJECT
  public:
    enum Column {
        NameColumn,
        StatusColumn,
        StepsColumn,
        DateColumn,
        NotesColumn,
        TagsColumn,
        IdColumn,  ///< "#12": two experiments of one name differ by more than their date
        ColumnCount
    };
    enum Role {
        IdRole = Qt::UserRole + 1,  ///< experiment or run id (qint64)
        IsRunRole,                  ///< bool
        SortRole,                   ///< what the column sorts by (dates as ISO text)
        StatusRole,                 ///< run status text (runs) or aggregate (experiments)
        TagsRole,                   ///< the row's tags (QStringList), on column 0
        LabelRole,                  ///< a run's label, an experiment's name (QString)
    };

    explicit RunTreeModel(QObject* parent = nullptr);

    /// Re-reads experiments and runs. Throws store::StoreError from the reader.
    void refresh(const ampbench::store::Database& db);
    /// Forgets everything (another database is being opened).
    void reset();

    /// One word for an experiment from its runs' statuses, the most urgent first
    /// ("running", "queued", "failed", ...); empty without runs.
    static QString aggregateStatus(const std::vector<const ampbench::store::RunRow*>& runs);

    QList<qint64> checkedRuns() const;  ///< by run id: the order they were planned in
    void setCheckedRuns(const QList<qint64>& runIds);
    QList<qint64> runsOfExperiment(qint64 experimentId) const;
    QStandardItem* experimentItem(qint64 id) const { return experiments_.value(id); }
    QStandardItem* runItem(qint64 id) const { return runs_.value(id); }

    /// A run's steps as the list shows them: the most of what its rows in the database
    /// say and what its trainer said last (setLiveSteps). The progress bar and the
    /// Cancel question read them here, so the three agree.
    struct Steps {
        qint64 done = 0;
        qint64 planned = 0;
    };
    Steps stepsOf(qint64 runId) const;
    /// The trainer's word on a run training here, shown at once when it is ahead of
    /// the rows read so far (they are written every few hundred milliseconds).
    void setLiveSteps(qint64 runId, qint64 step, qint64 planned);

  Q_SIGNALS:
    /// Check boxes changed (coalesced: once per event-loop turn).
    void checkedRunsChanged();
    /// Runs that a refresh found for the first time (not on the first refresh).
    void runsAppeared(const QList<qint64>& runIds);

  private:
    void onItemChanged(QStandardItem* item);
    void syncParentCheck(QStandardItem* experiment);
    static void setTags(QStandardItem* row0, const std::vector<std::string>& tags);
    void showSteps(qint64 runId);
    static void setCell(QStandardItem* row0, int column, const QString& text, const QVariant& sort,
                        const QString& tooltip = {});

    QHash<qint64, QStandardItem*> experiments_;  // column-0 items by id
    QHash<qint64, QStandardItem*> runs_;         // column-0 items by id
    bool loaded_ = false;                        // a first refresh happened since reset()
    QHash<qint64, Steps> stored_;                // runs' steps as last read
    QHash<qint64, Steps> live_;                  // runs' steps as their trainer said
    QSet<qint64> everSeen_;                      // runs listed since reset(), trashed ones too
    bool syncing_ = false;                       // changing check boxes ourselves
    QTimer checkedChanged_;
};

}  // namespace ampbench::ui
