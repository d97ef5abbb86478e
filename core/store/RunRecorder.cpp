#include "core/store/RunRecorder.h"

#include <sqlite3.h>

#include <utility>

namespace ampbench::store {

RunRecorder::RunRecorder(Database& db, int64_t run_id, std::chrono::milliseconds flush_interval)
    : db_(db),
      run_id_(run_id),
      interval_(flush_interval),
      last_flush_(std::chrono::steady_clock::now()) {}

RunRecorder::~RunRecorder() {
    try {
        flush();
    } catch (...) {
        // A destructor must not throw; the trainer already saw (or will never see) the error.
    }
}

void RunRecorder::onStart(const train::RunInfo& info) {
    db_.markRunning(run_id_, info.env_json);
    last_flush_ = std::chrono::steady_clock::now();
}

void RunRecorder::onStep(const train::StepRecord& step) {
    steps_.push_back(step);
    maybeFlush();
}

void RunRecorder::onEval(const train::EvalRecord& eval) {
    evals_.push_back(eval);
    maybeFlush();
}

void RunRecorder::onEvent(const train::EventRecord& event) {
    events_.push_back(event);
    maybeFlush();
}

void RunRecorder::onFinish(const train::RunOutcome& outcome) {
    try {
        flush();
    } catch (const std::exception& e) {
        // Still close the run so it does not stay `running`; then report the loss.
        try {
            std::string error = outcome.error.empty() ? std::string() : outcome.error + "; ";
            db_.finishRun(run_id_, train::RunStatus::Failed,
                          error + "the last rows could not be saved: " + e.what());
        } catch (...) {
        }
        throw;
    }
    db_.finishRun(run_id_, outcome.status, outcome.error);
}

void RunRecorder::maybeFlush() {
    if (std::chrono::steady_clock::now() - last_flush_ >= interval_)
        flush();
}

// All three buffers go in one transaction, so a watcher never sees a step
// without the events recorded with it. The buffers are taken before writing:
// after a failure (rolled back, rethrown) nothing is written twice.
void RunRecorder::flush() {
    last_flush_ = std::chrono::steady_clock::now();
    if (steps_.empty() && evals_.empty() && events_.empty())
        return;
    std::vector<train::StepRecord> steps = std::exchange(steps_, {});
    std::vector<train::EvalRecord> evals = std::exchange(evals_, {});
    std::vector<train::EventRecord> events = std::exchange(events_, {});

    const bool own = sqlite3_get_autocommit(db_.handle()) != 0;
    if (own)
        db_.begin();
    try {
        db_.insertSteps(run_id_, steps);
        db_.insertEvals(run_id_, evals);
        db_.insertEvents(run_id_, events);
        if (own)
            db_.commit();
    } catch (...) {
        if (own) {
            try {
                db_.rollback();
            } catch (...) {
            }
        }
        throw;
    }
}

}  // namespace ampbench::store
