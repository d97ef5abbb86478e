#pragma once
// A rank other than 0 of a data-parallel run, as the CLI's hidden `rank-worker`
// runs it: the run's spec, arm and seed read from the database (read-only), its
// shard trained, its summary published to rank 0. It writes nothing to the database.
#include <cstdint>
#include <string>

#include "core/parallel/RankSetup.h"
#include "core/run/TrainObserver.h"

namespace ampbench::train {

/// Throws std::runtime_error when the run is not in the database or its arm does
/// not train on `setup.world` ranks; otherwise the outcome of this rank's training.
run::RunOutcome trainRankWorker(const std::string& db_path, int64_t run_id,
                                const parallel::RankSetup& setup);

}  // namespace ampbench::train
