#pragma once
#include <QAbstractTableModel>
#include <QHash>
#include <QStringList>
#include <vector>

#include "core/config/ExperimentSpec.h"
#include "core/config/Validation.h"

namespace ampbench::ui {

/// The arms of an experiment as an editable table, one arm per row. Cells named
/// by validation errors ("arms[1].accumulation") are tinted and explain why in
/// their tooltip. The loss scaler's cells of an arm that runs without one are
/// disabled, their tooltip saying why. GUI thread only.
class ArmsTableModel : public QAbstractTableModel {
    Q_OBJECT
  public:
    explicit ArmsTableModel(QObject* parent = nullptr);

    void setArms(const std::vector<ampbench::config::ArmSpec>& arms);
    const std::vector<ampbench::config::ArmSpec>& arms() const { return arms_; }

    void addArm();
    void removeArm(int row);
    void duplicateArm(int row);

    /// Shows the errors of fields "arms[i].…"; returns the others.
    std::vector<ampbench::config::FieldError> setErrors(
        const std::vector<ampbench::config::FieldError>& errors);
    /// Error messages on a cell (empty when valid).
    QStringList cellErrors(int row, int column) const;

    /// Whether `amp` runs as fp16 with loss scaling (the spec targets CUDA) or as
    /// bf16 (the CPU): which arms use a loss scaler follows from it.
    void setAmpIsFp16(bool fp16);
    bool ampIsFp16() const { return ampIsFp16_; }
    /// What the machine offers the `ranks` column (its header's tooltip says it).
    void setRanksNote(const QString& note) { ranksNote_ = note; }
    /// Why a cell's field does nothing for its arm ("… runs without a loss
    /// scaler"); empty when it applies. Such a cell is disabled unless it holds an
    /// error, which stays editable so it can be fixed.
    QString unusedReason(int row, int column) const;

    /// The columns are the arm's field table (config/SpecFields.h), flattened.
    static int columns();
    /// The JSON field path of a column ("scaler.init_scale").
    static QString fieldOf(int column);
    /// The column of a field path ("accumulation"); -1 for none.
    static int columnOf(const QString& field);
    /// Choices of an enumeration column (precision, LR rule); empty for others.
    static QStringList choicesOf(int column);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    bool setData(const QModelIndex& index, const QVariant& value, int role) override;
    QVariant headerData(int section, Qt::Orientation orientation, int role) const override;
    Qt::ItemFlags flags(const QModelIndex& index) const override;

  Q_SIGNALS:
    /// The user changed a cell, or added, removed or duplicated an arm
    /// (`field` is "arms" then).
    void edited(const QString& field);

  private:
    QString uniqueName(const QString& base) const;

    std::vector<ampbench::config::ArmSpec> arms_;
    QHash<QPair<int, int>, QStringList> errors_;  // (row, column) → messages
    bool ampIsFp16_ = false;
    QString ranksNote_;
};

}  // namespace ampbench::ui
