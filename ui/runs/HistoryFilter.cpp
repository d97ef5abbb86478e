#include "ui/runs/HistoryFilter.h"

#include "ui/runs/RunTreeModel.h"

namespace ampbench::ui {

HistoryFilter::HistoryFilter(QObject* parent) : QSortFilterProxyModel(parent) {
    setRecursiveFilteringEnabled(true);  // a matching run keeps its experiment
    setSortRole(RunTreeModel::SortRole);
}

void HistoryFilter::setNameFilter(const QString& text) {
    name_ = text.trimmed();
    invalidateFilter();
}

void HistoryFilter::setStatusFilter(const QString& status) {
    status_ = status;
    invalidateFilter();
}

bool HistoryFilter::filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const {
    const QModelIndex index = sourceModel()->index(sourceRow, 0, sourceParent);
    const bool isRun = index.data(RunTreeModel::IsRunRole).toBool();
    if (!status_.isEmpty() &&
        (!isRun || index.data(RunTreeModel::StatusRole).toString() != status_)) {
        return false;
    }
    if (name_.isEmpty()) {
        return true;
    }
    if (index.data().toString().contains(name_, Qt::CaseInsensitive)) {
        return true;
    }
    // A run also matches by its experiment's name.
    return isRun && sourceParent.data().toString().contains(name_, Qt::CaseInsensitive);
}

}  // namespace ampbench::ui
