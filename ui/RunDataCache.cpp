#include "ui/RunDataCache.h"

#include <QTimer>
#include <exception>

#include "core/store/Database.h"
#include "ui/StoreSession.h"

namespace ampbench::ui {

RunDataCache::RunDataCache(StoreSession& session, QObject* parent)
    : QObject(parent), session_(session) {
    connect(&session_, &StoreSession::changed, this, &RunDataCache::refresh);
    connect(&session_, &StoreSession::opened, this, [this] {
        order_.clear();
        series_.clear();
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
    for (auto it = series_.begin(); it != series_.end();) {
        bool gone = false;
        try {
            any = refreshRun(it->first, it->second) || any;
            gone = it->second.row.id == 0;
        } catch (const std::exception&) {
            // A failed read leaves the rows as they were; the next poll retries and
            // StoreSession reports persistent failures.
        }
        if (gone) {
            order_.removeAll(it->first);
            it = series_.erase(it);
            any = true;
        } else {
            ++it;
        }
    }
    continueReading();
    return any;
}

bool RunDataCache::refreshRun(qint64 runId, RunSeries& s) {
    const store::Database& db = *session_.db();
    const auto row = db.run(runId);
    if (!row) {
        s.row = store::RunRow{};  // deleted
        return true;
    }
    const int64_t afterStep = s.steps.empty() ? 0 : s.steps.back().step;
    const int64_t afterEval = s.evals.empty() ? 0 : s.evals.back().step;
    auto steps = db.steps(runId, afterStep, kMaxRowsPerRead);
    if (static_cast<int64_t>(steps.size()) == kMaxRowsPerRead) {
        more_ = true;  // a long run read in slices keeps the GUI responsive
    }
    auto evals = db.evals(runId, afterEval);
    const bool rowChanged = row->status != s.row.status || row->error != s.row.error ||
                            row->last_step != s.row.last_step || row->notes != s.row.notes ||
                            row->experiment_name != s.row.experiment_name || s.row.id == 0;
    if (!rowChanged && steps.empty() && evals.empty()) {
        return false;
    }
    s.row = *row;
    s.steps.insert(s.steps.end(), steps.begin(), steps.end());
    s.evals.insert(s.evals.end(), evals.begin(), evals.end());
    s.summary = analysis::summarizeRun(s.row, s.steps, s.evals);
    ++s.revision;
    return true;
}

}  // namespace ampbench::ui
