#pragma once
#include <QStyledItemDelegate>
#include <functional>

namespace ampbench::ui {

/// Edits a cell with a combo box of fixed choices when `choices(column)` has
/// any, and with the default editor otherwise.
class ChoiceDelegate : public QStyledItemDelegate {
    Q_OBJECT
  public:
    explicit ChoiceDelegate(std::function<QStringList(int column)> choices,
                            QObject* parent = nullptr);

    QWidget* createEditor(QWidget* parent, const QStyleOptionViewItem& option,
                          const QModelIndex& index) const override;
    void setEditorData(QWidget* editor, const QModelIndex& index) const override;
    void setModelData(QWidget* editor, QAbstractItemModel* model,
                      const QModelIndex& index) const override;

  private:
    std::function<QStringList(int)> choices_;
};

}  // namespace ampbench::ui
