#pragma once
// An advice: which precision, batch, accumulation and checkpointing to train a model
// with on this device, and what it gains. It composes what exists: the max-batch search
// of each format (findArmCapacity), a pass of each candidate alone, and a short quality
// check of the fastest candidates against fp32 on two seeds. One experiment holds it all,
// every pass and check an ordinary run of it (a pass's planned arm says it is one);
// analysis/Advice.h reads it back. No LibTorch in this header.
#include <cmath>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/config/Advice.h"
#include "core/config/Validation.h"
#include "core/store/Database.h"
#include "core/train/Capacity.h"
#include "core/train/Experiment.h"

namespace ampbench::train {

struct AdviseOptions {
    /// Wall time for the whole advice, its set-up check excluded; 0: what a complete
    /// advice of this model needs (searches, passes and a quality check of
    /// config::kQualityTargetSteps steps).
    double budget_s = 0;
    int64_t memory_bytes = 0;  ///< the searches' memory budget (CapacityOptions::budget_bytes)
    int64_t max_batch = 0;     ///< the searches' upper bound; 0: 8 × the spec's micro-batch
    config::LrRule lr_rule = config::LrRule::Linear;  ///< for a larger effective batch
    int seeds = 2;                                    ///< quality-check seeds (the noise band)
    int leaders = 2;       ///< candidates checked for quality beside the baseline
    int timed_steps = 30;  ///< a pass's timed optimizer steps after its warm-up
    /// A pass times no fewer steps, whatever the budget.
    static constexpr int kLeastTimedSteps = 10;
};

enum class AdvisePhase { Search, Pass, Quality };
std::string toString(AdvisePhase phase);

/// Where an advice stands, for a progress display.
struct AdviseProgress {
    AdvisePhase phase = AdvisePhase::Search;
    std::string candidate;      ///< what is measured now
    int done = 0;               ///< of this phase's items
    int total = 0;              ///< this phase's items
    double seconds_left = NAN;  ///< the whole advice, estimated; NaN: not known yet
    double seconds_spent = 0;   ///< since the advice started
};

/// What a front end hears while an advice works; every member may be empty.
struct AdviseHooks {
    /// The front end ran checkSetup on the spec already (and stopped on a problem).
    bool setup_checked = false;
    std::function<void(int64_t experiment_id)> started;  ///< its experiment was created
    std::function<void(const AdviseProgress&)> progress;
    std::function<void(const std::string&)> note;  ///< a line about what it does and why
    /// Each run, pass or quality check, as runExperiment's hooks hear them.
    std::function<run::TrainObserver*(const PlannedRun&)> starting;
    std::function<void(const PlannedRun&, const run::RunOutcome&)> finished;
    std::function<void(const CapacityProgress&)> trial;  ///< each max-batch trial
};

/// How an advice ended; the front ends map it to an exit code or a banner.
enum class AdviseEnd {
    Advised,           ///< every step ran (the recommendation may still be fp32)
    NoMixedPrecision,  ///< advised, but no mixed-precision format trains here
    NothingFits,       ///< no format trains even batch 1 (its searches are recorded)
    BudgetTooSmall,    ///< the budget is short of one candidate: nothing was recorded
    ScriptRefused,     ///< the script trained the baseline, or every other candidate, at
                       ///< another batch than it was given (recorded, ruled out)
    Cancelled,         ///< stopped; what was measured is recorded
};

struct AdviseResult {
    int64_t experiment_id = 0;  ///< 0: nothing was recorded
    AdviseEnd end = AdviseEnd::Advised;
    std::string message;  ///< why, for every end but Advised
    std::vector<config::AdviceCandidate> candidates;
    bool any_failed = false;  ///< a run failed (a candidate ruled out by it)
};

/// How an advice trains its runs: the built-in trainer, or a training script's (which
/// owns its memory: no max-batch searches, and its own PyTorch says which formats run).
struct AdviseTrainer {
    /// One run of `spec` (a pass), telling `observer`; records into the database.
    std::function<run::RunOutcome(const config::ExperimentSpec& spec, const PlannedRun& run,
                                  const run::CancelToken& cancel, run::TrainObserver* observer)>
        pass;
    /// The quality check's planned runs, as trainPlanned trains them.
    std::function<ExperimentResult(const config::ValidSpec& spec, ExperimentPlan plan,
                                   const run::CancelToken& cancel, const ExperimentHooks& hooks)>
        quality;
    bool searches = true;
    /// What each format says here; nullopt: asked of this build's LibTorch on the device.
    std::optional<config::AdviceDevice> device;
};

/// The built-in trainer for `db` (trainRun, trainPlanned).
AdviseTrainer builtInTrainer(store::Database& db, const TrainOptions& options = {});

/// What each format says on `device` ("cpu", "cuda:0"): amp::Precision::unsupported of
/// fp16, bf16 and fp8, and whether the GPU has TF32 units.
config::AdviceDevice adviceDevice(const std::string& device);

/// The advice of `spec`'s model and data at its micro-batch (the user's batch) with its
/// optimizer. Throws what runExperiment throws for a damaged file, and SetupError (nothing
/// written) where checkSetup finds a problem, unless hooks.setup_checked.
AdviseResult advise(store::Database& db, const config::ValidSpec& spec,
                    const AdviseOptions& options, const run::CancelToken& cancel,
                    const AdviseHooks& hooks = {}, const AdviseTrainer& trainer = {});

/// The spec of an advice's experiment: the user's with the candidates as arms (the
/// baseline first), the quality check's seeds and micro-steps, evaluation at the end, each
/// arm's seeds fused where they can be.
config::ExperimentSpec adviceSpec(const config::ExperimentSpec& user,
                                  const std::vector<config::AdviceCandidate>& candidates, int seeds,
                                  int64_t micro_steps);

}  // namespace ampbench::train
