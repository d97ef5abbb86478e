#pragma once
// Runs a whole experiment into the store: one run per arm × seed, one at a time.
#include <cstdint>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/config/ExperimentSpec.h"
#include "core/config/Validation.h"
#include "core/store/Database.h"
#include "core/train/Trainer.h"

namespace ampbench::train {

/// Thrown by planExperiment and runExperiment for an invalid spec; nothing was written.
class SpecError : public std::runtime_error {
  public:
    explicit SpecError(std::vector<config::FieldError> errors);
    const std::vector<config::FieldError>& errors() const { return errors_; }

  private:
    std::vector<config::FieldError> errors_;
};

/// A run of the experiment as planned and recorded: its plan (arm, seed, what the arm
/// resolves to, the device) and its row.
struct PlannedRun : RunPlan {
    int64_t run_id = 0;
    std::string arm;  ///< the arm's name
    int64_t planned_steps = 0;
};

struct ExperimentPlan {
    int64_t experiment_id = 0;
    DeviceChoice device;  ///< where every run of it trains, resolved once
    std::vector<PlannedRun> runs;
};

/// Records the experiment and one `queued` run per arm × seed, each with the checksums
/// of the files it will read (data::recordInputs) and, for a rerun, the run it repeats
/// (`rerun_of`, 0 for none). SpecError when the micro-batch exceeds the training set.
ExperimentPlan planExperiment(store::Database& db, const config::ValidSpec& spec,
                              int64_t rerun_of = 0);
/// The same on a device chosen already (chooseDevice), as runExperiment plans.
ExperimentPlan planExperiment(store::Database& db, const config::ValidSpec& spec,
                              const DeviceChoice& device, int64_t rerun_of = 0);
/// The same for a spec not validated yet: SpecError when it has errors.
ExperimentPlan planExperiment(store::Database& db, const config::ExperimentSpec& spec,
                              int64_t rerun_of = 0);

/// Forwards every callback to several observers, in order.
class ObserverFanout : public run::TrainObserver {
  public:
    explicit ObserverFanout(std::vector<run::TrainObserver*> targets)
        : targets_(std::move(targets)) {}
    void onStart(const run::RunInfo& i) override;
    void onStep(const run::StepRecord& s) override;
    void onEval(const run::EvalRecord& e) override;
    void onEvent(const run::EventRecord& e) override;
    void onNumerics(const std::vector<run::NumericsRecord>& rows) override;
    void onFinish(const run::RunOutcome& o) override;
    bool onIdle() override;

  private:
    std::vector<run::TrainObserver*> targets_;
};

/// Trains one planned run, recording into `db` (and telling `extra`, if given).
run::RunOutcome executeRun(store::Database& db, const config::ExperimentSpec& spec,
                           const PlannedRun& run, const run::CancelToken& cancel,
                           run::TrainObserver* extra = nullptr, const TrainOptions& options = {});

/// Marks runs still `queued` (after a cancel) as cancelled so nothing looks pending.
void cancelQueued(store::Database& db, const ExperimentPlan& plan);

/// What a front end hears while runExperiment works; every member may be empty.
struct ExperimentHooks {
    std::function<void(const ExperimentPlan&)> planned;
    /// Before each run; the observer returned (may be null) hears that run.
    std::function<run::TrainObserver*(const PlannedRun&)> starting;
    std::function<void(const PlannedRun&, const run::RunOutcome&)> finished;
    /// A line about how the experiment trains, before it is planned (the fast
    /// verdict's passes of each arm alone and how its runs are packed).
    std::function<void(const std::string&)> note;
    /// The front end ran checkSetup on this spec already (and stopped on a problem).
    bool setup_checked = false;
    /// Before each run (side by side: when a GPU is free for it): true leaves it out;
    /// it is recorded cancelled, "removed from the queue before it started", and the
    /// next run starts.
    std::function<bool(const PlannedRun&)> skip;
    /// Before each run: a token that cancels that run alone, after which the queue
    /// goes on; null for the experiment's token. Runs side by side each need a token
    /// of their own, alive until their `finished`. The experiment's token does not
    /// reach a run given its own: a front end that cancels everything sets both.
    std::function<const run::CancelToken*(const PlannedRun&)> run_cancel;
};

struct ExperimentResult {
    ExperimentPlan plan;
    bool cancelled = false;
    bool any_failed = false;
};

/// The whole workflow both front ends run: checks the file (StoreError when it is
/// damaged), the spec (SpecError) and the model and data (SetupError, see
/// SetupCheck.h; nothing is written for either), plans the experiment, trains its runs
/// one at a time until done or cancelled, and marks what never started as
/// cancelled. The CLI maps the result to an exit code, the GUI to signals. A front end
/// that validated the spec itself (to print its problems its own way) passes the
/// ValidSpec; the spec is validated once either way.
ExperimentResult runExperiment(store::Database& db, const config::ValidSpec& spec,
                               const run::CancelToken& cancel, const ExperimentHooks& hooks = {},
                               const TrainOptions& options = {}, int64_t rerun_of = 0);
ExperimentResult runExperiment(store::Database& db, const config::ExperimentSpec& spec,
                               const run::CancelToken& cancel, const ExperimentHooks& hooks = {},
                               const TrainOptions& options = {}, int64_t rerun_of = 0);

/// How one planned run trains, with the token that cancels it and the front end's
/// observer of it (may be null): the built-in trainer, or a training script.
using TrainOne =
    std::function<run::RunOutcome(const PlannedRun&, const run::CancelToken&, run::TrainObserver*)>;

/// Trains `result.plan`'s runs one after another through `train_one`, asking the hooks
/// before (skip, run_cancel, starting) and after (finished) each; stops at a cancel of
/// the experiment (result.cancelled), goes on after one run cancelled by its own token.
/// What never started is left queued: the caller records it (cancelQueued).
void trainOneAtATime(store::Database& db, const run::CancelToken& cancel,
                     const ExperimentHooks& hooks, const TrainOne& train_one,
                     ExperimentResult& result);

/// How one run trains beside others, on a thread of its own: on `ranks` consecutive
/// GPUs from `first_gpu` on, stopped by the token given, telling the front end's
/// observer (null when it gave none). `shared_device()` says whether another run held
/// one of its GPUs at any time while it trained. The observer's calls hold the loop's
/// lock (the hooks are called under it too), and so does `shared_device`: ask it
/// outside the observer's calls.
using TrainPlaced =
    std::function<run::RunOutcome(const PlannedRun&, int first_gpu, const run::CancelToken&,
                                  run::TrainObserver*, const std::function<bool()>& shared_device)>;

/// Where trainSideBySide places runs.
struct SideBySide {
    int gpus = 1;          ///< GPUs (the CPU: one group of slots), at least 1
    int runs_per_gpu = 1;  ///< runs that train at once on each GPU, at least 1
    /// The GPUs a run takes (a data-parallel arm's ranks); empty: one each.
    std::function<int(const PlannedRun&)> ranks;
    /// Held while the loop writes to `db` (a run left out) where the runs' threads
    /// write through the same connection; null where each run opens its own.
    std::mutex* db_lock = nullptr;
};

/// Trains `result.plan`'s runs side by side, each on a thread of its own (named
/// "ampbench-run") through `train_placed`, as many at once as `places` has room for,
/// started in plan order. When a run's GPUs are free the hooks are asked, as
/// trainOneAtATime asks them: skip (the run is recorded cancelled, "removed from the
/// queue before it started"), run_cancel, starting; finished when it ends. Hooks and
/// the observers they return are called one at a time. Stops starting runs at a cancel
/// of the experiment (result.cancelled) or a run cancelled by it, goes on after one
/// run cancelled by its own token. A hook or a run that throws stops the queue: the
/// runs started are waited for, what never started is recorded cancelled
/// (cancelQueued) and the first error is rethrown. A run needing more GPUs than
/// `places.gpus` is an error before anything of it starts. Otherwise what never
/// started is left queued, as trainOneAtATime leaves it.
void trainSideBySide(store::Database& db, const run::CancelToken& cancel,
                     const ExperimentHooks& hooks, const SideBySide& places,
                     const TrainPlaced& train_placed, ExperimentResult& result);

/// Trains runs planned already (`plan`, in `db`) as runExperiment trains its own after
/// planning: side by side where the spec and the device allow it (runs_per_gpu, several
/// GPUs), else one at a time; what never started after a cancel is recorded cancelled.
/// A Slurm task trains its group of packed runs this way.
ExperimentResult trainPlanned(store::Database& db, const config::ValidSpec& spec,
                              ExperimentPlan plan, const run::CancelToken& cancel,
                              const ExperimentHooks& hooks = {}, const TrainOptions& options = {});

/// The spec as a ValidSpec, or SpecError naming every problem.
config::ValidSpec validSpec(const config::ExperimentSpec& spec);

/// The spec experiment `experiment_id` was planned with, as stored: what a max-batch
/// search of that experiment starts from (the CLI's `find-batch --experiment`, the
/// GUI's Find max batch). Throws store::StoreError(NotFound) when there is no such
/// experiment, SpecError when the stored spec has errors.
config::ExperimentSpec storedSpec(const store::Database& db, int64_t experiment_id);

/// Training samples a planned run sees (optimizer steps × micro-batch × K).
double plannedSamples(const config::ExperimentSpec& spec, const PlannedRun& run);

}  // namespace ampbench::train
