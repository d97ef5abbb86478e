#pragma once
#include <QObject>

class QTreeView;

namespace ampbench::ui {

/// Shares a run list's width out among its columns (a RunTreeModel, through any proxy
/// that keeps its columns): each run's "arm · seed N" first, whole, then its status,
/// then the steps, then the tags (only while something is tagged); what does not fit
/// is hidden rather than squeezed, and the names take what is left, an experiment's
/// name and a run's label cut at their end. Fitted again, once per event-loop turn,
/// whenever rows, their text or the list's width change. GUI thread only.
class RunListColumns : public QObject {
    Q_OBJECT
  public:
    explicit RunListColumns(QTreeView* view);

    /// Fits the columns now (tests; otherwise they follow the changes by themselves).
    void fit();

  protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

  private:
    void schedule();
    /// The width the name column needs to show the widest run's arm and seed whole.
    int armSeedWidth() const;
    /// The width column `column`'s title needs.
    int headerNeed(int column) const;
    /// The width column `column` needs to show its widest text (and its title) whole.
    int columnNeed(int column) const;
    bool tagged() const;

    QTreeView* view_;
    bool due_ = false;
};

}  // namespace ampbench::ui
