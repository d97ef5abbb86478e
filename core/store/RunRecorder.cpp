#include "core/store/RunRecorder.h"

#include <sqlite3.h>

#include <algorithm>
#include <cstdio>
#include <thread>

#include "core/store/NumericsStore.h"
#include "core/store/RecordStore.h"
#include "core/store/private/Schema.h"

namespace ampbench::store {
namespace {

using std::chrono::duration_cast;
using std::chrono::milliseconds;

double seconds(std::chrono::steady_clock::duration d) {
    return std::chrono::duration<double>(d).count();
}

std::string secondsText(double s) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f s", s);
    return buf;
}

/// Sets a connection's busy timeout for one scope, then the usual one again.
class BusyWait {
  public:
    BusyWait(sqlite3* db, milliseconds wait) : db_(db) {
        sqlite3_busy_timeout(db_, static_cast<int>(wait.count()));
    }
    ~BusyWait() { sqlite3_busy_timeout(db_, schema::kBusyTimeoutMs); }
    BusyWait(const BusyWait&) = delete;
    BusyWait& operator=(const BusyWait&) = delete;

  private:
    sqlite3* db_;
};

bool busy(const StoreError& e) {
    return e.kind() == StoreError::Kind::Busy;
}

}  // namespace

RunRecorder::RunRecorder(Database& db, int64_t run_id, milliseconds flush_interval, LockPolicy lock)
    : db_(db), run_id_(run_id), interval_(flush_interval), lock_(lock), next_try_(Clock::now()) {}

// Normally empty by now (onFinish wrote everything or reported what it could not);
// a recorder dropped without onFinish makes one last try.
RunRecorder::~RunRecorder() {
    if (finished_ || pendingRows() == 0)
        return;
    try {
        tryWrite(milliseconds(schema::kBusyTimeoutMs));
    } catch (...) {
        // A destructor must not throw.
    }
}

template <class Write>
void RunRecorder::untilWritten(Write write, milliseconds patience) {
    const auto start = Clock::now();
    milliseconds pause(100);
    for (;;) {
        try {
            if (write())
                return;
        } catch (const StoreError& e) {
            if (!busy(e))
                throw;
        }
        if (Clock::now() - start >= patience) {
            throw StoreError(StoreError::Kind::Busy,
                             db_.path() + " stayed locked by another program for " +
                                 secondsText(seconds(Clock::now() - start)));
        }
        std::this_thread::sleep_for(pause);
        pause = std::min(pause * 2, lock_.max_backoff);
    }
}

void RunRecorder::onStart(const run::RunInfo& info) {
    untilWritten(
        [&] {
            db_.markRunning(run_id_, info.env_json);
            return true;
        },
        lock_.limit);
    if (RecordListener* listener = db_.recordListener())
        listener->runStarted(run_id_);
}

void RunRecorder::onStep(const run::StepRecord& step) {
    steps_.push_back(step);
    last_step_ = step.step;
    maybeFlush();
}

void RunRecorder::onEval(const run::EvalRecord& eval) {
    evals_.push_back(eval);
    maybeFlush();
}

void RunRecorder::onEvent(const run::EventRecord& event) {
    events_.push_back(event);
    maybeFlush();
}

void RunRecorder::onNumerics(const std::vector<run::NumericsRecord>& rows) {
    numerics_.insert(numerics_.end(), rows.begin(), rows.end());
    maybeFlush();
}

void RunRecorder::onFinish(const run::RunOutcome& outcome) {
    finished_ = true;
    try {
        flush();
    } catch (const std::exception& e) {
        // Still try to close the run so it does not stay `running`; then report the loss.
        const std::string lost = e.what();
        try {
            std::string error = outcome.error.empty() ? std::string() : outcome.error + "; ";
            untilWritten(
                [&] {
                    db_.finishRun(run_id_, run::RunStatus::Failed, error + lost,
                                  run::FailureKind::Recording);
                    return true;
                },
                milliseconds(0));
        } catch (...) {
        }
        if (RecordListener* listener = db_.recordListener())
            listener->runFinished(run_id_);
        throw;
    }
    untilWritten(
        [&] {
            db_.finishRun(run_id_, outcome.status, outcome.error, outcome.failure);
            return true;
        },
        lock_.final_wait);
    if (RecordListener* listener = db_.recordListener())
        listener->runFinished(run_id_);
}

void RunRecorder::maybeFlush() {
    const auto now = Clock::now();
    if (!held_since_)
        held_since_ = now;
    if (gave_up_ || now - *held_since_ < interval_ || now < next_try_)
        return;
    commitHeld(now);
}

bool RunRecorder::onIdle() {
    if (finished_ || gave_up_ || pendingRows() == 0)
        return false;
    const auto now = Clock::now();
    if (now >= next_try_)
        commitHeld(now);
    return pendingRows() > 0 && !gave_up_;
}

void RunRecorder::commitHeld(Clock::time_point now) {
    if (tryWrite(lock_.try_wait))
        return;
    const auto held = now - *locked_since_;
    if (held >= lock_.limit) {
        gave_up_ = true;  // said once; onFinish waits for the lock once more
        throw StoreError(
            StoreError::Kind::Busy,
            db_.path() + " stayed locked by another program for " + secondsText(seconds(held)) +
                ", longer than the recorder waits while training; " +
                std::to_string(pendingRows()) + " rows are held and written when the lock goes");
    }
    backoff_ = std::clamp(backoff_ * 2, milliseconds(100), lock_.max_backoff);
    next_try_ = Clock::now() + backoff_;
}

// All three buffers go in one transaction, so a watcher never sees a step
// without the events recorded with it. The buffers are cleared only after the
// commit: a write that fails (rolled back) keeps every row for the next try.
bool RunRecorder::tryWrite(milliseconds wait) {
    const auto now = Clock::now();
    if (pendingRows() == 0)
        return true;
    const bool waited = locked_since_.has_value();
    if (waited) {
        // Written with the rows that waited, so the record says why they came late.
        events_.push_back({last_step_, run::EventKind::Warning,
                           "the database was locked by another program for " +
                               secondsText(seconds(now - *locked_since_)) + "; " +
                               std::to_string(steps_.size()) +
                               " steps waited in memory and were written when it was released",
                           seconds(now - *locked_since_)});
    }
    BusyWait scope(db_.handle(), wait);
    const bool own = sqlite3_get_autocommit(db_.handle()) != 0;
    // Sequence numbers follow the run's last one: steps, then evaluations, then events.
    int64_t first_step = 0, first_eval = 0, first_event = 0;
    try {
        if (own)
            db_.begin();
        const RecordStore records(db_);
        first_step = records.insertSteps(run_id_, steps_);
        first_eval = records.insertEvals(run_id_, evals_);
        first_event = records.insertEvents(run_id_, events_);
        NumericsStore(db_).insert(run_id_, numerics_);
        if (own)
            db_.commit();
    } catch (const StoreError& e) {
        if (own) {
            try {
                db_.rollback();
            } catch (...) {
            }
        }
        if (waited)
            events_.pop_back();
        if (!busy(e))
            throw StoreError(e.kind(), lostRows(e.what()));
        if (!locked_since_)
            locked_since_ = now;
        return false;
    }
    if (RecordListener* listener = db_.recordListener())
        tellListener(*listener, first_step, first_eval, first_event);
    steps_.clear();
    evals_.clear();
    events_.clear();
    numerics_.clear();
    held_since_.reset();
    locked_since_.reset();
    backoff_ = milliseconds(0);
    next_try_ = now;
    return true;
}

// The numerics, then the rows as stored, in seq order; the listener's failure is its
// own (the rows are in the database and must not be written again).
void RunRecorder::tellListener(RecordListener& listener, int64_t first_step, int64_t first_eval,
                               int64_t first_event) const {
    std::vector<SequencedRecord> rows;
    rows.reserve(pendingRows());
    for (size_t i = 0; i < steps_.size(); ++i)
        rows.push_back({first_step + static_cast<int64_t>(i), steps_[i]});
    for (size_t i = 0; i < evals_.size(); ++i)
        rows.push_back({first_eval + static_cast<int64_t>(i), evals_[i]});
    for (size_t i = 0; i < events_.size(); ++i)
        rows.push_back({first_event + static_cast<int64_t>(i), events_[i]});
    try {
        if (!numerics_.empty())
            listener.numericsCommitted(run_id_, numerics_);
    } catch (...) {
    }
    try {
        listener.rowsCommitted(run_id_, rows);
    } catch (...) {
    }
}

void RunRecorder::flush() {
    try {
        const auto wait = std::min(milliseconds(schema::kBusyTimeoutMs), lock_.final_wait);
        untilWritten([&] { return tryWrite(wait); }, lock_.final_wait);
    } catch (const StoreError& e) {
        if (!busy(e))
            throw;
        throw StoreError(e.kind(), lostRows(e.what()));
    }
}

std::string RunRecorder::lostRows(const std::string& reason) const {
    const std::string numerics =
        numerics_.empty() ? "" : " (and " + std::to_string(numerics_.size()) + " numerics rows)";
    return std::to_string(steps_.size()) + " steps, " + std::to_string(evals_.size()) +
           " evaluations and " + std::to_string(events_.size()) + " events" + numerics +
           " of run " + std::to_string(run_id_) + " could not be written: " + reason;
}

}  // namespace ampbench::store
