#include "ui/data/RunDataCache.h"

#include <QTimer>
#include <algorithm>
#include <exception>

#include "core/run/FusedGroup.h"
#include "core/store/Database.h"
#include "ui/data/StoreSession.h"

namespace ampbench::ui {

RunDataCache::RunDataCache(StoreSession& session, QObject* parent)
    : QObject(parent), session_(session) {
    connect(&session_, &StoreSession::changed, this, &RunDataCache::refresh);
    connect(&session_, &StoreSession::opened, this, [this] {
        order_.clear();
        series_.clear();
        summaryDue_.clear();
        Q_EMIT reset();
        Q_EMIT updated();
    });
}

void RunDataCache::setRuns(const QList<qint64>& runIds) {
    if (runIds == order_) {
        return;
    }
    order_ = runIds;
    for (auto it = series_.begin(); it != series_.end();) {
        it = order_.contains(it->first) ? std::next(it) : series_.erase(it);
    }
    for (qint64 id : order_) {
        series_.try_emplace(id);
    }
    fetchAll();
    Q_EMIT updated();  // the set changed even when no rows did
}

const RunSeries* RunDataCache::series(qint64 runId) const {
    auto it = series_.find(runId);
    return it == series_.end() || it->second.row.id == 0 ? nullptr : &it->second;
}

void RunDataCache::refresh() {
    if (fetchAll()) {
        Q_EMIT updated();
    }
}

void RunDataCache::continueReading() {
    if (more_) {
        QTimer::singleShot(0, this, &RunDataCache::refresh);
    }
}

bool RunDataCache::fetchAll() {
    if (!session_.db()) {
        return false;
    }
    more_ = false;
    bool any = false;
    QElapsedTimer slice;
    slice.start();
    for (auto it = series_.begin(); it != series_.end();) {
        if (slice.elapsed() >= kSliceBudgetMs) {
            more_ = true;  // the runs after this one wait for the next turn
            break;
        }
        bool gone = false;
        try {
            any = refreshRun(it->first, it->second, slice) || any;
            gone = it->second.row.id == 0;
        } catch (const std::exception&) {
            // A failed read leaves the rows as they were; the next poll retries and
            // StoreSession reports persistent failures.
        }
        if (gone) {
            order_.removeAll(it->first);
            summaryDue_.erase(it->first);
            it = series_.erase(it);
            any = true;
        } else {
            ++it;
        }
    }
    continueReading();
    return any;
}

bool RunDataCache::refreshRun(qint64 runId, RunSeries& s, const QElapsedTimer& slice) {
    const store::Database& db = *session_.db();
    const auto row = db.run(runId);
    if (!row) {
        s.row = store::RunRow{};  // deleted
        return true;
    }
    bool newRows = false;
    bool caughtUp = false;
    do {
        const int64_t afterStep = s.steps.empty() ? 0 : s.steps.back().step;
        const auto steps = db.steps(runId, afterStep, kRowsPerRead);
        caughtUp = static_cast<int64_t>(steps.size()) < kRowsPerRead;
        if (!steps.empty()) {
            s.steps.insert(s.steps.end(), steps.begin(), steps.end());
            summaryDue_.insert(runId);
            ++s.revision;
            newRows = true;
        }
    } while (!caughtUp && slice.elapsed() < kSliceBudgetMs);
    if (!caughtUp) {
        more_ = true;  // a long run read in slices keeps the GUI responsive
    }
    const int64_t afterEval = s.evals.empty() ? 0 : s.evals.back().step;
    auto evals = db.evals(runId, afterEval);
    const bool rowChanged = row->status != s.row.status || row->error != s.row.error ||
                            row->last_step != s.row.last_step || row->notes != s.row.notes ||
                            row->experiment_name != s.row.experiment_name || s.row.id == 0;
    const bool changed = rowChanged || newRows || !evals.empty();
    if (changed) {
        const bool ended = row->status != s.row.status && row->status != run::RunStatus::Queued &&
                           row->status != run::RunStatus::Running;
        if (ended && row->spec_json.find("\"world_size\"") != std::string::npos) {
            s.ranks = analysis::rankStepTimes(db.events(runId));  // recorded at its end
        }
        s.row = *row;
        s.evals.insert(s.evals.end(), evals.begin(), evals.end());
        summaryDue_.insert(runId);
        ++s.revision;
    }
    // Summaries read every row: one when a run is caught up, not one per slice.
    if (caughtUp && summaryDue_.erase(runId) > 0) {
        if (s.fused_group == 0 && !s.steps.empty()) {
            // A run's opening events are recorded before its first step.
            s.fused_group = run::fusedGroupSize(db.events(runId));
        }
        s.summary = analysis::summarizeRun(s.row, s.steps, s.evals, std::max(1, s.fused_group));
    }
    return changed;
}

}  // namespace ampbench::ui
