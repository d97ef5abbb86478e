#pragma once
#include <atomic>
#include <string>
#include <vector>

#include "core/run/Numerics.h"
#include "core/run/Records.h"

namespace ampbench::run {

/// What a run is, resolved on the device it runs on.
struct RunInfo {
    std::string arm;
    std::string precision;  ///< resolved: fp32 | amp-fp16 | amp-bf16
    std::string device;     ///< "cpu" or "cuda:0"
    uint64_t seed = 0;
    int64_t planned_steps = 0;  ///< optimizer steps
    int micro_batch = 0;
    int accumulation = 1;
    double lr = 0.0;       ///< after the LR rule
    std::string env_json;  ///< probe::Environment as JSON
};

struct RunOutcome {
    RunStatus status = RunStatus::Finished;
    std::string error;  ///< empty unless failed
    int64_t steps_done = 0;
    double wall_s = 0.0;
    /// Set when the end of the run (or rows before it) could not be recorded: the
    /// database says less than this outcome, and this says what is missing.
    std::string record_error;
    FailureKind failure = FailureKind::None;  ///< why it did not finish, as data
};

/// Callbacks from the training thread. Implementations must be quick: they run
/// between steps. Exceptions thrown from them fail the run.
class TrainObserver {
  public:
    virtual ~TrainObserver() = default;
    virtual void onStart(const RunInfo&) {}
    virtual void onStep(const StepRecord&) {}
    virtual void onEval(const EvalRecord&) {}
    virtual void onEvent(const EventRecord&) {}
    /// Per-layer numerics of one optimizer step (spec `numerics_every`).
    virtual void onNumerics(const std::vector<NumericsRecord>&) {}
    virtual void onFinish(const RunOutcome&) {}
    /// The producer has handed over what it has and may be quiet for a while (a
    /// read-back from the device was delivered, an evaluation starts, a script's pipe
    /// went quiet): a recorder commits what it holds now rather than when the next row
    /// comes. True while rows are still held that could not be written (another
    /// program's lock): the producer asks again.
    virtual bool onIdle() { return false; }
};

/// Set from any thread; the trainer checks it between micro-batches.
class CancelToken {
  public:
    void cancel() { flag_.store(true, std::memory_order_relaxed); }
    void reset() { flag_.store(false, std::memory_order_relaxed); }
    bool cancelled() const { return flag_.load(std::memory_order_relaxed); }

  private:
    std::atomic<bool> flag_{false};
};

}  // namespace ampbench::run
