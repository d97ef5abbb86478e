#pragma once
// An experiment's runs spread over the machine's GPUs (runExperiment's path when
// the device is CUDA and more than one GPU, or more than one run per GPU, is
// allowed): each run trains on a thread of its own with its own connection to the
// database, on the GPUs a GpuScheduler gives it, in plan order.
#include <functional>
#include <vector>

#include "core/store/Database.h"
#include "core/train/Experiment.h"

namespace ampbench::train {

/// Whether `spec`'s runs may train side by side in one process: not when its arms
/// differ in a process-wide switch (TF32) or capture CUDA graphs (one capture
/// stream per process).
bool canTrainSideBySide(const config::ExperimentSpec& spec);

/// The GPUs `spec`'s runs are spread over: 0 when they train one at a time (the CPU,
/// one GPU with one run per GPU, or arms that cannot train side by side), else
/// min(spec.gpus or all, visible). `device` is the experiment's, chosen once.
int spreadGpus(const config::ExperimentSpec& spec, const DeviceChoice& device);

/// How a group of runs trains beside others (trainGroupsSideBySide): each run's token
/// (its own, else the experiment's) and the front end's observer of it (may be null);
/// the outcomes in the group's order.
using TrainGroupPlaced = std::function<std::vector<run::RunOutcome>(
    const std::vector<PlannedRun>&, int first_gpu, const std::vector<const run::CancelToken*>&,
    const std::vector<run::TrainObserver*>&, const std::function<bool()>& shared_device)>;

/// trainSideBySide (Experiment.h) for groups of runs that train together (an arm's
/// fused seeds): a group takes one place on the GPUs, on the GPUs its runs need; the
/// hooks are asked for each of its runs when its turn comes.
void trainGroupsSideBySide(store::Database& db, const run::CancelToken& cancel,
                           const ExperimentHooks& hooks, const SideBySide& places,
                           const std::vector<std::vector<PlannedRun>>& groups,
                           const TrainGroupPlaced& train_placed, ExperimentResult& result);

/// Trains `result.plan`'s runs over `gpus` GPUs until done or cancelled; fills
/// `result` as runExperiment's own loop does. The built-in trainer's run for
/// trainSideBySide (Experiment.h): executeRun on a connection of the run's own, or for
/// a group of several runs (`groups`; empty: each run alone) trainFusedRuns.
void trainSpread(store::Database& db, const config::ExperimentSpec& spec,
                 const run::CancelToken& cancel, const ExperimentHooks& hooks,
                 const TrainOptions& options, int gpus, ExperimentResult& result,
                 const std::vector<std::vector<PlannedRun>>& groups = {});

}  // namespace ampbench::train
