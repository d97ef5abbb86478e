#pragma once
#include <QSortFilterProxyModel>

namespace ampbench::ui {

/// Keeps rows whose name (a run's label included) or one of whose tags contains the
/// name filter, and whose status equals the status filter; an experiment stays when
/// any of its runs does, and a run matches by its experiment's name and tags too.
/// "tag:WORD" keeps rows tagged WORD exactly (case aside), or whose experiment is.
class HistoryFilter : public QSortFilterProxyModel {
  public:
    explicit HistoryFilter(QObject* parent = nullptr);
    void setNameFilter(const QString& text);
    void setStatusFilter(const QString& status);

  protected:
    bool filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const override;

  private:
    bool matches(const QModelIndex& row0) const;

    QString name_;
    QString tag_;  ///< from "tag:WORD"; then name_ is empty
    QString status_;
};

}  // namespace ampbench::ui
