#pragma once
#include <QString>
#include <QTimer>
#include <QWidget>

class QComboBox;
class QSortFilterProxyModel;
class QSplitter;
class QTableView;
class QTreeView;

namespace ampbench::ui {

class VerdictPanel;

class PlotsView;
class RunDataCache;
class RunTreeModel;
class Settings;
class StoreSession;
class SummaryTableModel;

/// The runs tab: tick runs from any experiments in the picker, watch them in
/// the plots (live while they train), and compare arms in a sortable summary
/// table against a chosen baseline; Copy puts the table on the clipboard as TSV.
/// When the ticked runs belong to one experiment, the verdict panel judges that
/// experiment's arms against the baseline (analysed on a worker thread, refreshed
/// while runs train).
class CompareView : public QWidget {
    Q_OBJECT
  public:
    /// Delay between the user's change (runs ticked, baseline) and the verdict's
    /// refresh; changes in between are folded into one analysis.
    static constexpr int kVerdictDelayMs = 400;
    /// While runs train, the verdict is analysed again only when a ticked run changes
    /// status, records an evaluation or passes another tenth of its planned steps:
    /// each analysis reads the whole experiment, and on a CPU run it competes with
    /// training.
    static constexpr int kVerdictProgressSteps = 10;

    CompareView(RunTreeModel& runs, RunDataCache& cache, StoreSession& session, Settings& settings,
                QWidget* parent = nullptr);

    PlotsView* plots() const { return plots_; }
    QTreeView* picker() const { return picker_; }
    QTableView* summaryTable() const { return table_; }
    SummaryTableModel* summaryModel() const { return summary_; }
    /// The summary as tab-separated text (what Copy puts on the clipboard).
    QString summaryTsv() const;
    void copySummary() const;
    /// Expands the picker's entry of an experiment and scrolls to it.
    void revealExperiment(qint64 experimentId);
    VerdictPanel* verdictPanel() const { return verdict_; }
    /// The experiment the verdict panel shows (0: none), and how many analyses finished.
    qint64 verdictExperiment() const { return verdictShown_; }
    int verdictUpdates() const { return verdictUpdates_; }

  Q_SIGNALS:
    /// The verdict panel shows a new analysis (or its placeholder).
    void verdictUpdated();

  protected:
    void showEvent(QShowEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;

  private:
    void refreshSummary();
    /// Shares the width out between the run list and the plots (see the source).
    void fitSides();
    void fitSummaryHeight();
    /// Starts an analysis of the ticked runs' experiment, or shows why there is none.
    void refreshVerdict();
    void showVerdictMessage(const QString& message);
    /// The verdict refreshes within `ms`; an earlier refresh already due stays due.
    void scheduleVerdict(int ms);
    /// What the verdict depends on among the ticked runs, coarsely (see above).
    QString verdictInputs() const;

    RunTreeModel& runs_;
    RunDataCache& cache_;
    StoreSession& session_;

    QSplitter* split_ = nullptr;  // plots above, summary below
    QSplitter* sides_ = nullptr;  // run list and verdict | plots and summary
    bool sidesMoved_ = false;     // the user dragged the divider between the sides
    static constexpr int kListMinimumWidth = 280;
    int summaryRows_ = -1;  // rows the summary height was fitted to
    QTreeView* picker_ = nullptr;
    QSortFilterProxyModel* pickerOrder_ = nullptr;
    PlotsView* plots_ = nullptr;
    QComboBox* baseline_ = nullptr;
    QTableView* table_ = nullptr;
    SummaryTableModel* summary_ = nullptr;
    QSortFilterProxyModel* sorted_ = nullptr;

    VerdictPanel* verdict_ = nullptr;
    QTimer verdictDelay_;
    bool verdictBusy_ = false;   // an analysis is running on its thread
    bool verdictAgain_ = false;  // the data changed while it ran
    qint64 verdictShown_ = 0;
    int verdictUpdates_ = 0;
    QString verdictInputs_;  // of the last analysis started
};

}  // namespace ampbench::ui
