#pragma once
#include <QStandardItemModel>

namespace ampbench::store {
class Database;
}

namespace ampbench::ui {

/// What is in the trash, newest first: experiments (with the runs that went with
/// them) and runs trashed on their own. Rows carry RunTreeModel's IdRole and
/// IsRunRole. GUI thread only.
class TrashModel : public QStandardItemModel {
    Q_OBJECT
  public:
    enum Column { NameColumn, WhatColumn, TrashedColumn, ColumnCount };

    explicit TrashModel(QObject* parent = nullptr);
    /// Re-reads the trash. Throws store::StoreError from the reader.
    void refresh(const ampbench::store::Database& db);
    /// Row of (id, isRun), or -1.
    int rowOf(qint64 id, bool isRun) const;
};

}  // namespace ampbench::ui
