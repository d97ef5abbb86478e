#pragma once
#include <QSet>
#include <QString>
#include <QTreeWidget>

namespace ampbench::ui {

struct PlotInput;

/// The one legend of every plot panel, beside them rather than over a plot: an
/// entry per arm with its colour and line style, its runs (seeds, in their
/// shades) below it. Unticking a run hides it in every panel; unticking an arm
/// hides all its runs. Long names are elided in the middle, with the full name as
/// the tooltip. GUI thread only.
class PlotLegend : public QTreeWidget {
    Q_OBJECT
  public:
    explicit PlotLegend(QWidget* parent = nullptr);

    /// Shows the groups and runs of `input`, ticked unless their label is in
    /// `hidden`. Rebuilt only when the runs, labels or colours change, so the
    /// user's expanded and scrolled state survives live updates.
    void setInput(const PlotInput& input, const QSet<QString>& hidden);
    /// Ticks or unticks the run `label` without emitting hiddenToggled.
    void setRunHidden(const QString& label, bool hidden);
    /// As wide as its longest entry: the plots beside it keep the rest.
    QSize sizeHint() const override;

  Q_SIGNALS:
    /// The user ticked (hidden false) or unticked the run `label`.
    void hiddenToggled(const QString& label, bool hidden);

  private:
    void itemTicked(QTreeWidgetItem* item);

    QString shape_;  // what the tree was built from: labels, colours, styles
    bool updating_ = false;
};

}  // namespace ampbench::ui
