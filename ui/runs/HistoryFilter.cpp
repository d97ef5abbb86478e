#include "ui/runs/HistoryFilter.h"

#include "ui/runs/RunTreeModel.h"

namespace ampbench::ui {

HistoryFilter::HistoryFilter(QObject* parent) : QSortFilterProxyModel(parent) {
    setRecursiveFilteringEnabled(true);  // a matching run keeps its experiment
    setSortRole(RunTreeModel::SortRole);
}

void HistoryFilter::setNameFilter(const QString& text) {
    const QString t = text.trimmed();
    if (t.startsWith(QStringLiteral("tag:"), Qt::CaseInsensitive)) {
        tag_ = t.mid(4).trimmed();
        name_.clear();
    } else {
        tag_.clear();
        name_ = t;
    }
    invalidateFilter();
}

void HistoryFilter::setStatusFilter(const QString& status) {
    status_ = status;
    invalidateFilter();
}

bool HistoryFilter::matches(const QModelIndex& row0) const {
    const QStringList tags = row0.data(RunTreeModel::TagsRole).toStringList();
    if (!tag_.isEmpty()) {
        return tags.contains(tag_, Qt::CaseInsensitive);
    }
    if (row0.data().toString().contains(name_, Qt::CaseInsensitive)) {
        return true;
    }
    for (const QString& t : tags) {
        if (t.contains(name_, Qt::CaseInsensitive)) {
            return true;
        }
    }
    return false;
}

bool HistoryFilter::filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const {
    const QModelIndex index = sourceModel()->index(sourceRow, 0, sourceParent);
    const bool isRun = index.data(RunTreeModel::IsRunRole).toBool();
    if (!status_.isEmpty() &&
        (!isRun || index.data(RunTreeModel::StatusRole).toString() != status_)) {
        return false;
    }
    if (name_.isEmpty() && tag_.isEmpty()) {
        return true;
    }
    return matches(index) || (isRun && matches(sourceParent));
}

}  // namespace ampbench::ui
