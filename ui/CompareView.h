#pragma once
#include <QString>
#include <QWidget>

class QComboBox;
class QSortFilterProxyModel;
class QSplitter;
class QTableView;
class QTreeView;

namespace ampbench::ui {

class PlotsView;
class RunDataCache;
class RunTreeModel;
class Settings;
class SummaryTableModel;

/// The runs tab: tick runs from any experiments in the picker, watch them in
/// the plots (live while they train), and compare arms in a sortable summary
/// table against a chosen baseline; Copy puts the table on the clipboard as TSV.
class CompareView : public QWidget {
    Q_OBJECT
  public:
    CompareView(RunTreeModel& runs, RunDataCache& cache, Settings& settings,
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

  protected:
    void showEvent(QShowEvent* event) override;

  private:
    void refreshSummary();
    RunTreeModel& runs_;
    RunDataCache& cache_;
    void fitSummaryHeight();

    QSplitter* split_ = nullptr;  // plots above, summary below
    int summaryRows_ = -1;        // rows the summary height was fitted to
    QTreeView* picker_ = nullptr;
    QSortFilterProxyModel* pickerOrder_ = nullptr;
    PlotsView* plots_ = nullptr;
    QComboBox* baseline_ = nullptr;
    QTableView* table_ = nullptr;
    SummaryTableModel* summary_ = nullptr;
    QSortFilterProxyModel* sorted_ = nullptr;
};

}  // namespace ampbench::ui
