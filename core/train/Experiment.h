#pragma once
// Runs a whole experiment into the store: one run per arm × seed, one at a time.
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/config/ExperimentSpec.h"
#include "core/config/Validation.h"
#include "core/store/Database.h"
#include "core/train/Trainer.h"

namespace ampbench::train {

/// Thrown by planExperiment for an invalid spec; nothing was written.
class SpecError : public std::runtime_error {
  public:
    explicit SpecError(std::vector<config::FieldError> errors);
    const std::vector<config::FieldError>& errors() const { return errors_; }

  private:
    std::vector<config::FieldError> errors_;
};

struct PlannedRun {
    int64_t run_id = 0;
    int arm_index = 0;
    std::string arm;
    uint64_t seed = 0;
    int64_t planned_steps = 0;
};

struct ExperimentPlan {
    int64_t experiment_id = 0;
    std::vector<PlannedRun> runs;
};

/// Validates the spec, then records the experiment and one `queued` run per arm × seed.
ExperimentPlan planExperiment(store::Database& db, const config::ExperimentSpec& spec);

/// Forwards every callback to several observers, in order.
class ObserverFanout : public TrainObserver {
  public:
    explicit ObserverFanout(std::vector<TrainObserver*> targets) : targets_(std::move(targets)) {}
    void onStart(const RunInfo& i) override;
    void onStep(const StepRecord& s) override;
    void onEval(const EvalRecord& e) override;
    void onEvent(const EventRecord& e) override;
    void onFinish(const RunOutcome& o) override;

  private:
    std::vector<TrainObserver*> targets_;
};

/// Trains one planned run, recording into `db` (and telling `extra`, if given).
RunOutcome executeRun(store::Database& db, const config::ExperimentSpec& spec,
                      const PlannedRun& run, const CancelToken& cancel,
                      TrainObserver* extra = nullptr, const TrainOptions& options = {});

/// Marks runs still `queued` (after a cancel) as cancelled so nothing looks pending.
void cancelQueued(store::Database& db, const ExperimentPlan& plan);

}  // namespace ampbench::train
