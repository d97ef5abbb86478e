#include "core/script/Trainers.h"

#include <utility>

namespace ampbench::script {

bool trainsWithScript(const config::ExperimentSpec& spec) {
    return spec.model.name == "script";
}

train::ExperimentResult trainExperiment(store::Database& db, const config::ValidSpec& spec,
                                        const run::CancelToken& cancel,
                                        const train::ExperimentHooks& hooks,
                                        const Trainers& trainers, int64_t rerun_of) {
    if (trainsWithScript(spec.spec())) {
        return runScriptExperiment(db, spec, cancel, hooks, trainers.script, rerun_of);
    }
    return train::runExperiment(db, spec, cancel, hooks, trainers.options, rerun_of);
}

train::ExperimentResult trainExperiment(store::Database& db, const config::ExperimentSpec& spec,
                                        const run::CancelToken& cancel,
                                        const train::ExperimentHooks& hooks,
                                        const Trainers& trainers) {
    if (trainsWithScript(spec)) {
        return runScriptExperiment(db, spec, cancel, hooks, trainers.script);
    }
    return train::runExperiment(db, spec, cancel, hooks, trainers.options);
}

train::ExperimentResult trainPlannedRuns(store::Database& db, const config::ValidSpec& spec,
                                         train::ExperimentPlan plan, const run::CancelToken& cancel,
                                         const train::ExperimentHooks& hooks,
                                         const Trainers& trainers) {
    if (trainsWithScript(spec.spec())) {
        return trainScriptRuns(db, spec, std::move(plan), cancel, hooks, trainers.script);
    }
    return train::trainPlanned(db, spec, std::move(plan), cancel, hooks, trainers.options);
}

train::AdviseTrainer adviseTrainer(store::Database& db, const config::ExperimentSpec& spec,
                                   const Trainers& trainers) {
    return trainsWithScript(spec) ? scriptAdviseTrainer(db, trainers.script)
                                  : train::builtInTrainer(db, trainers.options);
}

}  // namespace ampbench::script
