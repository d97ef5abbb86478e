#include "ui/runs/RunTreeModel.h"

#include <QDateTime>
#include <QSet>
#include <algorithm>
#include <map>

#include "core/store/Database.h"

namespace ampbench::ui {
namespace {

QString localTime(const std::string& iso) {
    if (iso.empty()) {
        return {};
    }
    QDateTime t = QDateTime::fromString(QString::fromStdString(iso), Qt::ISODate);
    return t.isValid() ? t.toLocalTime().toString("yyyy-MM-dd HH:mm") : QString::fromStdString(iso);
}

QList<QStandardItem*> newRow(qint64 id, bool isRun) {
    QList<QStandardItem*> row;
    for (int c = 0; c < RunTreeModel::ColumnCount; ++c) {
        auto* item = new QStandardItem;
        item->setEditable(false);
        item->setData(id, RunTreeModel::IdRole);
        item->setData(isRun, RunTreeModel::IsRunRole);
        row.append(item);
    }
    row[0]->setCheckable(true);
    row[0]->setCheckState(Qt::Unchecked);
    return row;
}

}  // namespace

RunTreeModel::RunTreeModel(QObject* parent) : QStandardItemModel(parent) {
    setHorizontalHeaderLabels({tr("Experiment / run"), tr("Status"), tr("Steps"), tr("Date"),
                               tr("Notes"), tr("Tags"), tr("Id")});
    setSortRole(SortRole);
    checkedChanged_.setSingleShot(true);
    checkedChanged_.setInterval(0);
    connect(&checkedChanged_, &QTimer::timeout, this, &RunTreeModel::checkedRunsChanged);
    connect(this, &QStandardItemModel::itemChanged, this, &RunTreeModel::onItemChanged);
}

void RunTreeModel::setCell(QStandardItem* row0, int column, const QString& text,
                           const QVariant& sort, const QString& tooltip) {
    QStandardItem* parent = row0->parent();
    QStandardItem* cell =
        parent ? parent->child(row0->row(), column) : row0->model()->item(row0->row(), column);
    if (!cell) {
        return;
    }
    if (cell->text() != text) {
        cell->setText(text);
    }
    if (cell->data(SortRole) != sort) {
        cell->setData(sort, SortRole);
    }
    if (cell->toolTip() != tooltip) {
        cell->setToolTip(tooltip);
    }
}

// The most urgent status first.
QString RunTreeModel::aggregateStatus(const std::vector<const store::RunRow*>& runs) {
    using run::RunStatus;
    for (RunStatus s : {RunStatus::Running, RunStatus::Queued, RunStatus::Failed,
                        RunStatus::Interrupted, RunStatus::Cancelled}) {
        for (const auto* r : runs) {
            if (r->status == s) {
                return QString::fromStdString(run::toString(s));
            }
        }
    }
    return runs.empty() ? QString() : QStringLiteral("finished");
}

void RunTreeModel::setTags(QStandardItem* row0, const std::vector<std::string>& tags) {
    QStringList list;
    for (const auto& t : tags) {
        list.append(QString::fromStdString(t));
    }
    if (row0->data(TagsRole).toStringList() != list || !row0->data(TagsRole).isValid()) {
        row0->setData(list, TagsRole);
    }
    const QString text = list.join(QStringLiteral(", "));
    setCell(row0, TagsColumn, text, text.toLower(), text);
}

void RunTreeModel::refresh(const store::Database& db) {
    const auto experiments = db.experiments();
    const auto runs = db.runs();
    std::map<int64_t, std::vector<const store::RunRow*>> byExperiment;
    for (const auto& r : runs) {
        byExperiment[r.experiment_id].push_back(&r);
    }

    const bool wasSyncing = syncing_;
    syncing_ = true;  // new rows arrive unchecked; that is no user change
    QSet<qint64> seenExperiments, seenRuns;
    QList<qint64> appeared;
    for (const auto& e : experiments) {
        QStandardItem* eItem = experiments_.value(e.id);
        if (!eItem) {
            auto row = newRow(e.id, false);
            appendRow(row);
            eItem = row[0];
            experiments_.insert(e.id, eItem);
        }
        seenExperiments.insert(e.id);
        const auto& eRuns = byExperiment[e.id];
        const QString name = QString::fromStdString(e.name);
        const QString host = QString::fromStdString(e.origin);
        // An experiment followed from a GPU server says where it trains.
        const QString shown = host.isEmpty() ? name : tr("%1 \u00b7 on %2").arg(name, host);
        setCell(eItem, NameColumn, shown, name.toLower(),
                host.isEmpty() ? tr("%1 (experiment #%2)").arg(shown).arg(e.id)
                               : tr("experiment #%1, trained on %2 (#%3 there)")
                                     .arg(e.id)
                                     .arg(host)
                                     .arg(e.origin_id));
        const QString status = aggregateStatus(eRuns);
        setCell(eItem, StatusColumn, status, status);
        eItem->setData(status, StatusRole);
        // The experiment's progress: its runs' steps added up (the run count is in the
        // tooltip and in the rows below).
        int64_t stepsDone = 0, stepsPlanned = 0;
        for (const auto* r : eRuns) {
            stored_.insert(r->id, Steps{r->last_step, r->planned_steps});
            const Steps shown = stepsOf(r->id);
            stepsDone += shown.done;
            stepsPlanned += shown.planned;
        }
        setCell(
            eItem, StepsColumn,
            eRuns.empty() ? QString() : QStringLiteral("%1 / %2").arg(stepsDone).arg(stepsPlanned),
            static_cast<qlonglong>(stepsDone),
            tr("%n run(s): steps done / planned, added up", nullptr,
               static_cast<int>(eRuns.size())));
        setCell(eItem, DateColumn, localTime(e.created_at), QString::fromStdString(e.created_at));
        setCell(eItem, IdColumn, QStringLiteral("#%1").arg(e.id), static_cast<qlonglong>(e.id),
                tr("experiment #%1").arg(e.id));
        const QString notes = QString::fromStdString(e.notes);
        setCell(eItem, NotesColumn, notes.section('\n', 0, 0), notes, notes);
        setTags(eItem, e.tags);
        eItem->setData(name, LabelRole);

        for (const auto* r : eRuns) {
            QStandardItem* rItem = runs_.value(r->id);
            if (!rItem) {
                auto row = newRow(r->id, true);
                eItem->appendRow(row);
                rItem = row[0];
                runs_.insert(r->id, rItem);
                // New to this database, not back from the trash: a run brought back
                // is no run another process started, and must not move the ticks.
                if (!everSeen_.contains(r->id)) {
                    appeared.append(r->id);
                }
                everSeen_.insert(r->id);
            }
            seenRuns.insert(r->id);
            const QString armSeed =
                QString::fromStdString(r->arm) + QStringLiteral(" \u00b7 seed %1").arg(r->seed);
            const QString runLabel = QString::fromStdString(r->label);
            const QString label =
                runLabel.isEmpty() ? armSeed : armSeed + QStringLiteral(" \u2014 ") + runLabel;
            setCell(rItem, NameColumn, label,
                    QStringLiteral("%1").arg(r->arm_index, 4, 10, QChar('0')) + label,
                    r->origin.empty() ? tr("%1 (run #%2)").arg(label).arg(r->id)
                                      : tr("run #%1, trained on %2 (#%3 there)")
                                            .arg(r->id)
                                            .arg(QString::fromStdString(r->origin))
                                            .arg(r->origin_run_id));
            if (rItem->data(LabelRole).toString() != runLabel) {
                rItem->setData(runLabel, LabelRole);
            }
            setTags(rItem, r->tags);
            const QString st = QString::fromStdString(run::toString(r->status));
            setCell(rItem, StatusColumn, st, st, QString::fromStdString(r->error));
            rItem->setData(st, StatusRole);
            const Steps shown = stepsOf(r->id);
            setCell(rItem, StepsColumn,
                    QStringLiteral("%1 / %2").arg(shown.done).arg(shown.planned),
                    static_cast<qlonglong>(shown.done));
            // Runs sort by id, negated: newest-first date order lists them as planned.
            setCell(rItem, DateColumn, localTime(r->started_at), static_cast<qlonglong>(-r->id));
            setCell(rItem, IdColumn, QStringLiteral("#%1").arg(r->id),
                    static_cast<qlonglong>(r->id), tr("run #%1").arg(r->id));
            const QString rNotes = QString::fromStdString(r->notes);
            setCell(rItem, NotesColumn, rNotes.section('\n', 0, 0), rNotes, rNotes);
        }
    }
    // Rows deleted or moved to the trash: runs first, then experiments.
    bool removedChecked = false;
    for (auto it = runs_.begin(); it != runs_.end();) {
        if (seenRuns.contains(it.key())) {
            ++it;
            continue;
        }
        removedChecked = removedChecked || it.value()->checkState() == Qt::Checked;
        QStandardItem* item = it.value();
        item->parent()->removeRow(item->row());
        it = runs_.erase(it);
    }
    for (auto it = experiments_.begin(); it != experiments_.end();) {
        if (seenExperiments.contains(it.key())) {
            syncParentCheck(it.value());
            ++it;
            continue;
        }
        removeRow(it.value()->row());
        it = experiments_.erase(it);
    }
    syncing_ = wasSyncing;
    if (removedChecked) {
        checkedChanged_.start();
    }
    if (loaded_ && !appeared.isEmpty()) {
        Q_EMIT runsAppeared(appeared);
    }
    loaded_ = true;
}

void RunTreeModel::reset() {
    syncing_ = true;
    removeRows(0, rowCount());
    syncing_ = false;
    experiments_.clear();
    runs_.clear();
    everSeen_.clear();
    stored_.clear();
    live_.clear();
    loaded_ = false;
    checkedChanged_.start();
}

QList<qint64> RunTreeModel::checkedRuns() const {
    QList<qint64> out;
    for (int r = 0; r < rowCount(); ++r) {
        const QStandardItem* e = item(r, 0);
        for (int c = 0; c < e->rowCount(); ++c) {
            if (e->child(c, 0)->checkState() == Qt::Checked) {
                out.append(e->child(c, 0)->data(IdRole).toLongLong());
            }
        }
    }
    std::sort(out.begin(), out.end());  // creation order: arms as planned, older experiments first
    return out;
}

void RunTreeModel::setCheckedRuns(const QList<qint64>& runIds) {
    syncing_ = true;
    for (auto it = runs_.begin(); it != runs_.end(); ++it) {
        const Qt::CheckState want = runIds.contains(it.key()) ? Qt::Checked : Qt::Unchecked;
        if (it.value()->checkState() != want) {
            it.value()->setCheckState(want);
        }
    }
    for (QStandardItem* e : std::as_const(experiments_)) {
        syncParentCheck(e);
    }
    syncing_ = false;
    checkedChanged_.start();
}

RunTreeModel::Steps RunTreeModel::stepsOf(qint64 runId) const {
    const Steps stored = stored_.value(runId);
    const auto live = live_.constFind(runId);
    if (live == live_.constEnd()) {
        return stored;
    }
    return {std::max(stored.done, live->done), live->planned > 0 ? live->planned : stored.planned};
}

void RunTreeModel::setLiveSteps(qint64 runId, qint64 step, qint64 planned) {
    Steps& live = live_[runId];
    live.done = std::max(live.done, step);
    live.planned = planned;
    showSteps(runId);
}

void RunTreeModel::showSteps(qint64 runId) {
    QStandardItem* rItem = runs_.value(runId);
    if (!rItem) {
        return;  // its rows arrive with the next refresh
    }
    const Steps shown = stepsOf(runId);
    setCell(rItem, StepsColumn, QStringLiteral("%1 / %2").arg(shown.done).arg(shown.planned),
            static_cast<qlonglong>(shown.done));
    QStandardItem* eItem = rItem->parent();
    qint64 done = 0, plannedSum = 0;
    for (int c = 0; c < eItem->rowCount(); ++c) {
        const Steps s = stepsOf(eItem->child(c, 0)->data(IdRole).toLongLong());
        done += s.done;
        plannedSum += s.planned;
    }
    QStandardItem* cell = eItem->model()->item(eItem->row(), StepsColumn);
    setCell(eItem, StepsColumn, QStringLiteral("%1 / %2").arg(done).arg(plannedSum),
            static_cast<qlonglong>(done), cell ? cell->toolTip() : QString());
}

QList<qint64> RunTreeModel::runsOfExperiment(qint64 experimentId) const {
    QList<qint64> out;
    if (const QStandardItem* e = experiments_.value(experimentId)) {
        for (int c = 0; c < e->rowCount(); ++c) {
            out.append(e->child(c, 0)->data(IdRole).toLongLong());
        }
    }
    return out;
}

void RunTreeModel::onItemChanged(QStandardItem* item) {
    if (syncing_ || item->column() != 0) {
        return;
    }
    syncing_ = true;
    if (item->data(IsRunRole).toBool()) {
        syncParentCheck(item->parent());
    } else if (item->checkState() != Qt::PartiallyChecked) {
        for (int c = 0; c < item->rowCount(); ++c) {
            if (item->child(c, 0)->checkState() != item->checkState()) {
                item->child(c, 0)->setCheckState(item->checkState());
            }
        }
    }
    syncing_ = false;
    checkedChanged_.start();
}

void RunTreeModel::syncParentCheck(QStandardItem* experiment) {
    if (!experiment || experiment->rowCount() == 0) {
        return;
    }
    int checked = 0;
    for (int c = 0; c < experiment->rowCount(); ++c) {
        checked += experiment->child(c, 0)->checkState() == Qt::Checked ? 1 : 0;
    }
    const Qt::CheckState state = checked == 0                        ? Qt::Unchecked
                                 : checked == experiment->rowCount() ? Qt::Checked
                                                                     : Qt::PartiallyChecked;
    if (experiment->checkState() != state) {
        const bool was = syncing_;
        syncing_ = true;
        experiment->setCheckState(state);
        syncing_ = was;
    }
}

}  // namespace ampbench::ui
