// The one entry point a front end trains through: the built-in trainer or, where the
// spec's model is a training script, the script, chosen here and nowhere else.
#pragma once

#include <cstdint>

#include "core/script/ScriptRun.h"
#include "core/train/Advise.h"
#include "core/train/Experiment.h"

namespace ampbench::script {

/// What trains an experiment's runs, as a front end prepared it: the built-in trainer's
/// options, and a script's settings (its interpreter, the device and the GPUs the front
/// end counted) for a spec whose model is a script.
struct Trainers {
    train::TrainOptions options;
    ScriptSettings script;
};

/// Whether `spec`'s runs are trained by a script (its model is "script").
bool trainsWithScript(const config::ExperimentSpec& spec);

/// Checks, plans and trains `spec` for a front end, as train::runExperiment does with the
/// built-in trainer and runScriptExperiment with a script, whichever the spec's model
/// asks for; the hooks are heard the same way either way.
train::ExperimentResult trainExperiment(store::Database& db, const config::ValidSpec& spec,
                                        const run::CancelToken& cancel,
                                        const train::ExperimentHooks& hooks = {},
                                        const Trainers& trainers = {}, int64_t rerun_of = 0);

/// The same for a spec not validated yet: a damaged file is named before the spec's
/// problems (train::SpecError), as train::runExperiment's overload for a plain spec does.
train::ExperimentResult trainExperiment(store::Database& db, const config::ExperimentSpec& spec,
                                        const run::CancelToken& cancel,
                                        const train::ExperimentHooks& hooks = {},
                                        const Trainers& trainers = {});

/// Trains runs planned already (`plan`, in `db`), as train::trainPlanned or
/// trainScriptRuns, whichever the spec's model asks for.
train::ExperimentResult trainPlannedRuns(store::Database& db, const config::ValidSpec& spec,
                                         train::ExperimentPlan plan, const run::CancelToken& cancel,
                                         const train::ExperimentHooks& hooks = {},
                                         const Trainers& trainers = {});

/// How an advice of `spec` trains: train::builtInTrainer, or scriptAdviseTrainer where
/// the spec's model is a script.
train::AdviseTrainer adviseTrainer(store::Database& db, const config::ExperimentSpec& spec,
                                   const Trainers& trainers = {});

}  // namespace ampbench::script
