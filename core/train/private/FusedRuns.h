#pragma once
// Private to train/: the runs of one arm that differ only in their seed, trained as one
// fused model (models/Fused.h) and recorded each as its own run: its own steps,
// evaluations, loss scale and events, from its own data order, initial weights,
// dropout, BatchNorm statistics, loss scaler and optimizer state.
#include <cstdint>
#include <string>
#include <vector>

#include "core/config/ExperimentSpec.h"
#include "core/run/TrainObserver.h"
#include "core/store/Database.h"
#include "core/train/Experiment.h"
#include "core/train/Trainer.h"

namespace ampbench::train {

/// One run of a fused group: its seed, what hears it, what cancels it alone.
struct FusedMember {
    uint64_t seed = 0;
    run::TrainObserver* observer = nullptr;
    const run::CancelToken* cancel = nullptr;  ///< null: only the group's token
};

/// Why the runs of arm `arm_index` cannot train fused on a device of this kind, from
/// the spec alone; empty when they can (the model is checked again when it is built).
std::string fusionProblem(const config::ExperimentSpec& spec, int arm_index, bool cuda);

/// Trains `members` (runs of arm `arm_index`) as one fused model until each ends; each
/// member's observer hears its run as trainRun's observer would, onFinish included.
/// The outcomes come in the members' order. `cancel` stops them all, a member's own
/// token that member alone.
/// `plan` is the arm's as planning resolved it (its seed is the members').
std::vector<run::RunOutcome> trainFused(const config::ExperimentSpec& spec, const RunPlan& plan,
                                        const std::vector<FusedMember>& members,
                                        const run::CancelToken& cancel,
                                        const TrainOptions& options);
/// The same for arm `arm_index` planned here on the spec's device (a pass alone).
std::vector<run::RunOutcome> trainFused(const config::ExperimentSpec& spec, int arm_index,
                                        const std::vector<FusedMember>& members,
                                        const run::CancelToken& cancel,
                                        const TrainOptions& options);

/// trainFused for planned runs of one arm in `db`: each recorded by a store::RunRecorder
/// of its own and heard by the front end's observer beside it (`extras`, each may be
/// null); `tokens` cancel each run alone (or hold the experiment's).
std::vector<run::RunOutcome> trainFusedRuns(store::Database& db, const config::ExperimentSpec& spec,
                                            const std::vector<PlannedRun>& runs,
                                            const std::vector<const run::CancelToken*>& tokens,
                                            const std::vector<run::TrainObserver*>& extras,
                                            const run::CancelToken& cancel,
                                            const TrainOptions& options);

}  // namespace ampbench::train
