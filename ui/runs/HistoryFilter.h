#pragma once
#include <QSortFilterProxyModel>

namespace ampbench::ui {

/// Keeps rows whose name contains the name filter and whose status equals the
/// status filter; an experiment stays when any of its runs does.
class HistoryFilter : public QSortFilterProxyModel {
  public:
    explicit HistoryFilter(QObject* parent = nullptr);
    void setNameFilter(const QString& text);
    void setStatusFilter(const QString& status);

  protected:
    bool filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const override;

  private:
    QString name_;
    QString status_;
};

}  // namespace ampbench::ui
