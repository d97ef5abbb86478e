#include "ui/runs/TrashModel.h"

#include <QDateTime>

#include "core/store/Database.h"
#include "ui/runs/RunTreeModel.h"

namespace ampbench::ui {

TrashModel::TrashModel(QObject* parent) : QStandardItemModel(parent) {
    setHorizontalHeaderLabels({tr("In the trash"), tr("What"), tr("Moved to the trash")});
}

void TrashModel::refresh(const store::Database& db) {
    const auto rows = db.trash();
    removeRows(0, rowCount());
    for (const auto& t : rows) {
        QList<QStandardItem*> row;
        const QString name = QString::fromStdString(t.name);
        const QString experiment = QString::fromStdString(t.experiment_name);
        const QDateTime when =
            QDateTime::fromString(QString::fromStdString(t.trashed_at), Qt::ISODate);
        row.append(new QStandardItem(name));
        row.append(new QStandardItem(
            t.is_run ? tr("run #%1 of experiment \u201c%2\u201d").arg(t.id).arg(experiment)
                     : tr("experiment #%1 with %n run(s)", nullptr, t.run_count).arg(t.id)));
        row.append(new QStandardItem(when.isValid()
                                         ? when.toLocalTime().toString("yyyy-MM-dd HH:mm")
                                         : QString::fromStdString(t.trashed_at)));
        for (QStandardItem* item : row) {
            item->setEditable(false);
            item->setData(static_cast<qlonglong>(t.id), RunTreeModel::IdRole);
            item->setData(t.is_run, RunTreeModel::IsRunRole);
        }
        appendRow(row);
    }
}

int TrashModel::rowOf(qint64 id, bool isRun) const {
    for (int r = 0; r < rowCount(); ++r) {
        const QStandardItem* i = item(r, 0);
        if (i->data(RunTreeModel::IdRole).toLongLong() == id &&
            i->data(RunTreeModel::IsRunRole).toBool() == isRun) {
            return r;
        }
    }
    return -1;
}

}  // namespace ampbench::ui
