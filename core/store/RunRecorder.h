#pragma once
#include <chrono>
#include <cstdint>
#include <vector>

#include "core/store/Database.h"
#include "core/train/TrainObserver.h"

namespace ampbench::store {

/// Persists one run's records as the trainer emits them. Rows are buffered and
/// written in one transaction at most every `flush_interval` (default 250 ms) so
/// another process watching the file sees them promptly; the buffer is always
/// flushed when the run ends, fails or is cancelled. Lives on the training thread.
class RunRecorder : public train::TrainObserver {
  public:
    RunRecorder(Database& db, int64_t run_id,
                std::chrono::milliseconds flush_interval = std::chrono::milliseconds(250));
    ~RunRecorder() override;

    void onStart(const train::RunInfo& info) override;
    void onStep(const train::StepRecord& step) override;
    void onEval(const train::EvalRecord& eval) override;
    void onEvent(const train::EventRecord& event) override;
    void onFinish(const train::RunOutcome& outcome) override;

    void flush();
    int64_t runId() const { return run_id_; }

  private:
    void maybeFlush();

    Database& db_;
    int64_t run_id_;
    std::chrono::milliseconds interval_;
    std::chrono::steady_clock::time_point last_flush_;
    std::vector<train::StepRecord> steps_;
    std::vector<train::EvalRecord> evals_;
    std::vector<train::EventRecord> events_;
};

}  // namespace ampbench::store
