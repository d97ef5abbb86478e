#pragma once
#include <QAbstractTableModel>
#include <QColor>
#include <QList>
#include <vector>

#include "core/analysis/Summary.h"

namespace ampbench::ui {

/// The comparison table: one row per arm with its figures against the baseline.
/// Display text comes from analysis' formatters; SortRole holds the number.
class SummaryTableModel : public QAbstractTableModel {
    Q_OBJECT
  public:
    enum Column {
        Arm,
        Runs,
        MedianStep,
        StepSpread,
        SamplesPerS,
        Speedup,
        PeakMemory,
        MemoryRatio,
        ValAccuracy,
        Skipped,
        ColumnCount
    };
    static constexpr int SortRole = Qt::UserRole + 1;

    explicit SummaryTableModel(QObject* parent = nullptr);

    /// `colors` parallel to `arms` (the plots' colours), may be empty.
    void setArms(std::vector<ampbench::analysis::ArmSummary> arms, QList<QColor> colors);
    const std::vector<ampbench::analysis::ArmSummary>& arms() const { return arms_; }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

  private:
    std::vector<ampbench::analysis::ArmSummary> arms_;
    QList<QColor> colors_;
};

}  // namespace ampbench::ui
