#pragma once
// An experiment's runs spread over the machine's GPUs (runExperiment's path when
// the device is CUDA and more than one GPU, or more than one run per GPU, is
// allowed): each run trains on a thread of its own with its own connection to the
// database, on the GPUs a GpuScheduler gives it, in plan order.
#include "core/store/Database.h"
#include "core/train/Experiment.h"

namespace ampbench::train {

/// Whether `spec`'s runs may train side by side in one process: not when its arms
/// differ in a process-wide switch (TF32) or capture CUDA graphs (one capture
/// stream per process).
bool canTrainSideBySide(const config::ExperimentSpec& spec);

/// The GPUs `spec`'s runs are spread over: 0 when they train one at a time (the CPU,
/// one GPU with one run per GPU, or arms that cannot train side by side), else
/// min(spec.gpus or all, visible).
int spreadGpus(const config::ExperimentSpec& spec);

/// Trains `result.plan`'s runs over `gpus` GPUs until done or cancelled; fills
/// `result` as runExperiment's own loop does. The built-in trainer's run for
/// trainSideBySide (Experiment.h): executeRun on a connection of the run's own.
void trainSpread(store::Database& db, const config::ExperimentSpec& spec,
                 const run::CancelToken& cancel, const ExperimentHooks& hooks,
                 const TrainOptions& options, int gpus, ExperimentResult& result);

}  // namespace ampbench::train
