#pragma once
#include <QWidget>

#include "core/train/SetupCheck.h"

class QLabel;
class QTreeWidget;

namespace ampbench::ui {

/// What the chosen model and data are, as the check before training found them:
/// the model's source, parameter count and module tree; the data's size, sample
/// and target shapes and class names; the task and the output of one batch.
class SetupPanel : public QWidget {
    Q_OBJECT
  public:
    explicit SetupPanel(QWidget* parent = nullptr);

    /// Says a check is under way (the last facts stay until it ends).
    void showChecking();
    void showReport(const ampbench::train::SetupReport& report);
    QString factsText() const;
    QTreeWidget* moduleTree() const { return tree_; }

  Q_SIGNALS:
    /// A module of the tree was double-clicked: its dotted path ("blocks.0.qkv").
    void moduleChosen(const QString& path);

  private:
    QLabel* facts_ = nullptr;
    QLabel* state_ = nullptr;
    QTreeWidget* tree_ = nullptr;
};

}  // namespace ampbench::ui
