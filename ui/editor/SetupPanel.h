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

    /// Says a check is under way; the facts of the spec checked before are gone (they
    /// describe another model or data), the tree keeps its place.
    void showChecking();
    /// Says nothing is checked while the spec has problems (`why`), with no facts.
    void showNotChecked(const QString& why);
    /// `script`: the report of a training script (its file and interpreter checked,
    /// nothing trained here).
    void showReport(const ampbench::train::SetupReport& report, bool script = false);
    QString factsText() const;
    QLabel* factsLabel() const { return facts_; }
    QTreeWidget* moduleTree() const { return tree_; }

  Q_SIGNALS:
    /// A module of the tree was double-clicked: its dotted path ("blocks.0.qkv").
    void moduleChosen(const QString& path);

  protected:
    void resizeEvent(QResizeEvent* event) override;

  private:
    /// Empties the facts and the tree, leaving one line in the tree that says why.
    void clearFacts(const QString& treeLine);
    /// Keeps the facts' minimum height at what their wrapped lines need at the panel's
    /// width, so the splitter above gives them that and never cuts the last line.
    void fitFacts();

    QLabel* facts_ = nullptr;
    QLabel* state_ = nullptr;
    QTreeWidget* tree_ = nullptr;
};

}  // namespace ampbench::ui
