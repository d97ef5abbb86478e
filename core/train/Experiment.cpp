#include "core/train/Experiment.h"

#include <algorithm>
#include <exception>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "core/config/Placement.h"
#include "core/config/SpecJson.h"
#include "core/data/DataError.h"
#include "core/data/InputRecord.h"
#include "core/parallel/Machine.h"
#include "core/parallel/RankLauncher.h"
#include "core/store/RunRecorder.h"
#include "core/train/SetupCheck.h"
#include "core/train/private/FastVerdict.h"
#include "core/train/private/FusedRuns.h"
#include "core/train/private/SpreadRuns.h"

namespace ampbench::train {

using namespace run;  // the records a run emits
namespace {

/// A file name's safe form: letters, digits and _ . + - kept, the rest '_'.
std::string fileSafe(const std::string& text) {
    std::string out;
    for (char c : text) {
        out += config::nameChar(c) ? c : '_';
    }
    return out.empty() ? "experiment" : out;
}

std::string joinErrors(const std::vector<config::FieldError>& errors) {
    std::string text = "invalid experiment spec:";
    for (const auto& e : errors) {
        text += "\n  " + e.toString();
    }
    return text;
}

}  // namespace

SpecError::SpecError(std::vector<config::FieldError> errors)
    : std::runtime_error(joinErrors(errors)), errors_(std::move(errors)) {}

config::ValidSpec validSpec(const config::ExperimentSpec& spec) {
    std::vector<config::FieldError> errors;
    auto valid = config::ValidSpec::check(spec, errors);
    if (!valid) {
        throw SpecError(std::move(errors));
    }
    return std::move(*valid);
}

ExperimentPlan planExperiment(store::Database& db, const config::ExperimentSpec& spec,
                              int64_t rerun_of) {
    return planExperiment(db, validSpec(spec), rerun_of);
}

ExperimentPlan planExperiment(store::Database& db, const config::ValidSpec& valid,
                              int64_t rerun_of) {
    return planExperiment(db, valid, chooseDevice(valid.spec().device), rerun_of);
}

ExperimentPlan planExperiment(store::Database& db, const config::ValidSpec& valid,
                              const DeviceChoice& device, int64_t rerun_of) {
    const config::ExperimentSpec& spec = valid.spec();
    // Missing data fails each run with its own message (the front ends check the
    // data first); readable data also bounds the micro-batch.
    int64_t train_size = 0;
    try {
        train_size = trainingSetSize(spec.data);
    } catch (const data::DataError&) {
        if (spec.epochs > 0) {
            throw;
        }
    }
    if (train_size > 0 && spec.micro_batch > train_size) {
        throw SpecError(
            {{"micro_batch", std::to_string(spec.micro_batch),
              "must be at most the training set's " + std::to_string(train_size) + " samples"}});
    }
    for (size_t i = 0; i < spec.arms.size(); ++i) {
        if (train_size > 0 && spec.arms[i].micro_batch > train_size) {
            throw SpecError({{"arms[" + std::to_string(i) + "].micro_batch",
                              std::to_string(spec.arms[i].micro_batch),
                              "must be at most the training set's " + std::to_string(train_size) +
                                  " samples"}});
        }
    }
    // Read before the transaction: a large folder takes a while to checksum.
    const std::string inputs_json = run::inputsToJson(data::recordInputs(spec));
    ExperimentPlan plan;
    db.begin();
    try {
        plan.experiment_id = db.createExperiment(spec.name, config::specToJsonText(spec));
        // CUDA asked for where there is none: planned as CUDA, each run fails with why.
        plan.device = device;
        // The order runs train in: round-robin over the arms, seed by seed, so a drift
        // in the machine's speed is shared by every arm instead of charged to one; or
        // arm by arm when the spec asks.
        std::vector<std::pair<size_t, uint64_t>> order;
        size_t most_seeds = 0;
        for (const auto& arm : spec.arms) {
            most_seeds = std::max(most_seeds, config::seedsForArm(spec, arm).size());
        }
        if (spec.interleave) {
            for (size_t k = 0; k < most_seeds; ++k) {
                for (size_t i = 0; i < spec.arms.size(); ++i) {
                    const auto seeds = config::seedsForArm(spec, spec.arms[i]);
                    if (k < seeds.size()) {
                        order.emplace_back(i, seeds[k]);
                    }
                }
            }
        } else {
            for (size_t i = 0; i < spec.arms.size(); ++i) {
                for (uint64_t seed : config::seedsForArm(spec, spec.arms[i])) {
                    order.emplace_back(i, seed);
                }
            }
        }
        for (const auto& [i, seed] : order) {
            const auto& arm = spec.arms[i];
            PlannedRun r;
            static_cast<RunPlan&>(r) = planRun(spec, static_cast<int>(i), seed, device);
            r.arm = arm.name;
            r.planned_steps = plannedOptimizerSteps(spec, arm, train_size);
            r.run_id = db.createRun(plan.experiment_id, arm.name, r.arm_index, seed,
                                    config::plannedArmToJson(r.planned), r.planned_steps,
                                    inputs_json, rerun_of);
            plan.runs.push_back(r);
        }
        db.commit();
    } catch (...) {
        db.rollback();
        throw;
    }
    return plan;
}

void ObserverFanout::onStart(const RunInfo& i) {
    for (auto* t : targets_) {
        t->onStart(i);
    }
}
void ObserverFanout::onStep(const StepRecord& s) {
    for (auto* t : targets_) {
        t->onStep(s);
    }
}
void ObserverFanout::onEval(const EvalRecord& e) {
    for (auto* t : targets_) {
        t->onEval(e);
    }
}
void ObserverFanout::onEvent(const EventRecord& e) {
    for (auto* t : targets_) {
        t->onEvent(e);
    }
}
void ObserverFanout::onNumerics(const std::vector<NumericsRecord>& rows) {
    for (auto* t : targets_) {
        t->onNumerics(rows);
    }
}
bool ObserverFanout::onIdle() {
    bool holding = false;
    for (auto* t : targets_) {
        holding = t->onIdle() || holding;
    }
    return holding;
}
// Every target hears the end, even after one failed to record it (the first
// failure is rethrown): a progress display must not wait for ever.
void ObserverFanout::onFinish(const RunOutcome& o) {
    std::exception_ptr first;
    for (auto* t : targets_) {
        try {
            t->onFinish(o);
        } catch (...) {
            if (!first) {
                first = std::current_exception();
            }
        }
    }
    if (first) {
        std::rethrow_exception(first);
    }
}

RunOutcome executeRun(store::Database& db, const config::ExperimentSpec& spec,
                      const PlannedRun& run, const CancelToken& cancel, TrainObserver* extra,
                      const TrainOptions& options) {
    store::RunRecorder recorder(db, run.run_id);
    std::vector<TrainObserver*> targets{&recorder};
    if (extra) {
        targets.push_back(extra);
    }
    ObserverFanout fanout(targets);
    TrainOptions with = options;
    if (!spec.save_weights.empty() && spec.model.name == "torchscript") {
        with.save_model_to = spec.save_weights + "/" + fileSafe(spec.name) + "-run" +
                             std::to_string(run.run_id) + "-" + fileSafe(run.arm) + "-seed" +
                             std::to_string(run.seed) + ".pt";
    }
    // A data-parallel arm: this process is rank 0 and starts the other ranks.
    std::unique_ptr<parallel::RankLauncher> ranks;
    const bool known = run.arm_index >= 0 && run.arm_index < static_cast<int>(spec.arms.size());
    const int world = known ? spec.arms[static_cast<size_t>(run.arm_index)].ranks : 1;
    if (world > 1 && !with.ranks.active()) {
        ranks = std::make_unique<parallel::RankLauncher>(parallel::workerExecutable(), db.path(),
                                                         run.run_id, world, with.ranks.timeout_s,
                                                         with.ranks.first_gpu);
        with.ranks = ranks->rank0();
    }
    RunOutcome out = trainRun(spec, static_cast<const RunPlan&>(run), fanout, cancel, with);
    if (ranks) {  // the others end with rank 0: after their summary, or on its failure
        ranks->finish(out.status == RunStatus::Finished ? 30.0 : 5.0);
    }
    return out;
}

void trainOneAtATime(store::Database& db, const CancelToken& cancel, const ExperimentHooks& hooks,
                     const TrainOne& train_one, ExperimentResult& result) {
    for (const auto& run : result.plan.runs) {
        if (cancel.cancelled()) {
            result.cancelled = true;
            break;
        }
        if (hooks.skip && hooks.skip(run)) {
            db.finishRun(run.run_id, RunStatus::Cancelled,
                         "removed from the queue before it started", FailureKind::Cancelled);
            continue;
        }
        const CancelToken* own = hooks.run_cancel ? hooks.run_cancel(run) : nullptr;
        TrainObserver* extra = hooks.starting ? hooks.starting(run) : nullptr;
        const RunOutcome outcome = train_one(run, own ? *own : cancel, extra);
        result.any_failed = result.any_failed || outcome.status == RunStatus::Failed;
        if (hooks.finished) {
            hooks.finished(run, outcome);
        }
        // A run cancelled by its own token ends alone; the queue goes on.
        if (outcome.status == RunStatus::Cancelled && (!own || cancel.cancelled())) {
            result.cancelled = true;
            break;
        }
    }
}

void cancelQueued(store::Database& db, const ExperimentPlan& plan) {
    for (const auto& r : plan.runs) {
        auto row = db.run(r.run_id);
        if (row && row->status == RunStatus::Queued) {
            db.finishRun(r.run_id, RunStatus::Cancelled, "cancelled before it started",
                         FailureKind::Cancelled);
        }
    }
}

namespace {

/// The plan's runs in the order they train, each arm whose seeds train fused as one
/// group where the first of its runs stood (fuse_seeds); empty when no arm fuses.
/// `note` hears which arms fuse and why the others do not.
std::vector<std::vector<PlannedRun>> fusedGroups(
    const config::ExperimentSpec& spec, const ExperimentPlan& plan,
    const std::function<void(const std::string&)>& note) {
    if (!config::fuseSeeds(spec) || !plan.device.problem.empty()) {
        return {};  // without the device each run fails with the device's message
    }
    const bool cuda = plan.device.placement.isCuda();
    std::vector<std::string> why(spec.arms.size());
    std::string fused, alone;
    for (size_t i = 0; i < spec.arms.size(); ++i) {
        why[i] = fusionProblem(spec, static_cast<int>(i), cuda);
        std::string& list = why[i].empty() ? fused : alone;
        list += (list.empty() ? "'" : ", '") + spec.arms[i].name + "'" +
                (why[i].empty() ? "" : " (" + why[i] + ")");
    }
    if (fused.empty()) {
        if (note) {
            note("fused seeds: no arm trains fused: " + alone);
        }
        return {};
    }
    std::vector<std::vector<PlannedRun>> groups;
    std::vector<int> group_of(spec.arms.size(), -1);
    for (const auto& run : plan.runs) {
        const auto arm = static_cast<size_t>(run.arm_index);
        if (arm < why.size() && why[arm].empty()) {
            if (group_of[arm] < 0) {
                group_of[arm] = static_cast<int>(groups.size());
                groups.emplace_back();
            }
            groups[static_cast<size_t>(group_of[arm])].push_back(run);
        } else {
            groups.push_back({run});
        }
    }
    if (note) {
        note("fused seeds: " + fused + " train each arm's seeds as one fused model" +
             (alone.empty() ? std::string() : "; each run alone: " + alone));
    }
    return groups;
}

/// One fused group of runs, asking the hooks of each run as one at a time asks them.
void trainFusedGroup(store::Database& db, const config::ExperimentSpec& spec,
                     const std::vector<PlannedRun>& group, const CancelToken& cancel,
                     const ExperimentHooks& hooks, const TrainOptions& with,
                     ExperimentResult& result) {
    std::vector<PlannedRun> runs;
    std::vector<const CancelToken*> owns;
    std::vector<TrainObserver*> extras;
    for (const auto& run : group) {
        if (hooks.skip && hooks.skip(run)) {
            db.finishRun(run.run_id, RunStatus::Cancelled,
                         "removed from the queue before it started", FailureKind::Cancelled);
            continue;
        }
        owns.push_back(hooks.run_cancel ? hooks.run_cancel(run) : nullptr);
        extras.push_back(hooks.starting ? hooks.starting(run) : nullptr);
        runs.push_back(run);
    }
    if (runs.empty()) {
        return;
    }
    const auto outcomes = trainFusedRuns(db, spec, runs, owns, extras, cancel, with);
    for (size_t i = 0; i < runs.size(); ++i) {
        const RunOutcome& outcome = outcomes[i];
        result.any_failed = result.any_failed || outcome.status == RunStatus::Failed;
        if (hooks.finished) {
            hooks.finished(runs[i], outcome);
        }
        if (outcome.status == RunStatus::Cancelled && (!owns[i] || cancel.cancelled())) {
            result.cancelled = true;
        }
    }
}

/// The plan's groups one after another: a fused group as one, a run alone as
/// trainOneAtATime trains it.
void trainGroups(store::Database& db, const config::ExperimentSpec& spec,
                 const std::vector<std::vector<PlannedRun>>& groups, const CancelToken& cancel,
                 const ExperimentHooks& hooks, const TrainOptions& with, ExperimentResult& result) {
    for (const auto& group : groups) {
        if (cancel.cancelled() || result.cancelled) {
            result.cancelled = true;
            break;
        }
        if (group.size() > 1) {
            trainFusedGroup(db, spec, group, cancel, hooks, with, result);
            continue;
        }
        ExperimentResult one;
        one.plan.runs = group;
        trainOneAtATime(
            db, cancel, hooks,
            [&](const PlannedRun& run, const CancelToken& c, TrainObserver* extra) {
                return executeRun(db, spec, run, c, extra, with);
            },
            one);
        result.any_failed = result.any_failed || one.any_failed;
        result.cancelled = result.cancelled || one.cancelled;
    }
}

/// Trains `result.plan`'s runs, side by side where the spec and the device allow it,
/// else one at a time, and marks what never started as cancelled.
void trainPlan(store::Database& db, const config::ExperimentSpec& trained,
               const CancelToken& cancel, const ExperimentHooks& hooks, const TrainOptions& with,
               ExperimentResult& result) {
    const auto groups = fusedGroups(trained, result.plan, hooks.note);
    if (const int gpus = spreadGpus(trained, result.plan.device); gpus > 0) {
        trainSpread(db, trained, cancel, hooks, with, gpus, result, groups);  // side by side
    } else if (!groups.empty()) {
        trainGroups(db, trained, groups, cancel, hooks, with, result);
    } else {
        trainOneAtATime(
            db, cancel, hooks,
            [&](const PlannedRun& run, const CancelToken& c, TrainObserver* extra) {
                return executeRun(db, trained, run, c, extra, with);
            },
            result);
    }
    if (result.cancelled || cancel.cancelled()) {
        result.cancelled = true;
        cancelQueued(db, result.plan);
    }
}

/// runExperiment once the file is known intact.
ExperimentResult runOnIntactFile(store::Database& db, const config::ValidSpec& valid,
                                 const CancelToken& cancel, const ExperimentHooks& hooks,
                                 const TrainOptions& options, int64_t rerun_of) {
    const config::ExperimentSpec& spec = valid.spec();
    if (!hooks.setup_checked) {
        SetupReport report = checkSetup(spec);
        if (!report.ok()) {
            throw SetupError(std::move(report));
        }
    }
    ExperimentResult result;
    TrainOptions with = options;
    std::optional<config::ValidSpec> fast;
    // The device, once for the passes alone and the plan.
    const DeviceChoice device = chooseDevice(spec.device);
    if (spec.fast_verdict) {
        if (!device.problem.empty()) {
            throw std::runtime_error(device.problem);
        }
        if (!device.placement.isCuda()) {
            if (hooks.note) {
                hooks.note(std::string("fast verdict: no CUDA device here, so the runs train ") +
                           (config::fuseSeeds(spec)
                                ? "eagerly (each arm's seeds fused where it can)"
                                : "one at a time in eager mode") +
                           " and are timed as they train");
            }
        } else {
            // Each arm alone first: the figures packed runs cannot give.
            const auto passes = timeArmsAlone(spec, device, cancel, options, hooks.note);
            const auto sharing =
                cancel.cancelled() ? std::vector<SharingPass>{}
                                   : timeSharing(spec, device, passes, cancel, options, hooks.note);
            if (cancel.cancelled()) {
                result.cancelled = true;
                return result;  // nothing was planned
            }
            const int visible = parallel::rankCapacity(true).gpus;
            const int gpus = spec.gpus > 0 ? std::min(spec.gpus, visible) : visible;
            std::vector<config::FieldError> errors;
            fast = config::ValidSpec::check(
                fastVerdictSpec(spec, passes, sharing, gpus, hooks.note), errors);
            if (!fast) {
                throw SpecError(std::move(errors));
            }
            with.opening_events = [passes, run_spec = fast->spec()](int arm, uint64_t seed) {
                return fastVerdictEvents(run_spec, passes, arm, seed);
            };
        }
    }
    const config::ValidSpec& planned = fast ? *fast : valid;
    const config::ExperimentSpec& trained = planned.spec();
    result.plan = planExperiment(db, planned, device, rerun_of);
    if (hooks.planned) {
        hooks.planned(result.plan);
    }
    trainPlan(db, trained, cancel, hooks, with, result);
    return result;
}

}  // namespace

ExperimentResult runExperiment(store::Database& db, const config::ValidSpec& spec,
                               const CancelToken& cancel, const ExperimentHooks& hooks,
                               const TrainOptions& options, int64_t rerun_of) {
    db.requireIntact();  // nothing is added to a damaged file
    return runOnIntactFile(db, spec, cancel, hooks, options, rerun_of);
}

ExperimentResult runExperiment(store::Database& db, const config::ExperimentSpec& spec,
                               const CancelToken& cancel, const ExperimentHooks& hooks,
                               const TrainOptions& options, int64_t rerun_of) {
    db.requireIntact();  // a damaged file is named before the spec's problems
    return runOnIntactFile(db, validSpec(spec), cancel, hooks, options, rerun_of);
}

ExperimentResult trainPlanned(store::Database& db, const config::ValidSpec& spec,
                              ExperimentPlan plan, const CancelToken& cancel,
                              const ExperimentHooks& hooks, const TrainOptions& options) {
    ExperimentResult result;
    result.plan = std::move(plan);
    trainPlan(db, spec.spec(), cancel, hooks, options, result);
    return result;
}

config::ExperimentSpec storedSpec(const store::Database& db, int64_t experiment_id) {
    const auto row = db.experiment(experiment_id);
    if (!row) {
        throw store::StoreError(
            store::StoreError::Kind::NotFound,
            "no experiment " + std::to_string(experiment_id) + " in " + db.path());
    }
    std::vector<config::FieldError> errors;
    config::ExperimentSpec spec = config::specFromJsonText(row->spec_json, errors);
    if (!errors.empty()) {
        throw SpecError(std::move(errors));
    }
    return spec;
}

double plannedSamples(const config::ExperimentSpec& spec, const PlannedRun& run) {
    const int k = spec.arms.at(static_cast<size_t>(run.arm_index)).accumulation;
    return static_cast<double>(run.planned_steps) *
           config::microBatchOf(spec, spec.arms.at(static_cast<size_t>(run.arm_index))) * k;
}

}  // namespace ampbench::train
