#include "core/train/RankWorker.h"

#include <stdexcept>

#include "core/store/Database.h"
#include "core/train/Experiment.h"
#include "core/train/Trainer.h"

namespace ampbench::train {

run::RunOutcome trainRankWorker(const std::string& db_path, int64_t run_id,
                                const parallel::RankSetup& setup) {
    config::ExperimentSpec spec;
    int arm_index = 0;
    uint64_t seed = 0;
    {
        auto db = store::Database::open(db_path, store::Database::Mode::ReadOnly);
        const auto row = db->run(run_id);
        if (!row) {
            throw std::runtime_error("no run " + std::to_string(run_id) + " in " + db_path);
        }
        spec = storedSpec(*db, row->experiment_id);
        arm_index = row->arm_index;
        seed = row->seed;
    }
    if (arm_index < 0 || arm_index >= static_cast<int>(spec.arms.size()) ||
        spec.arms[static_cast<size_t>(arm_index)].ranks != setup.world) {
        throw std::runtime_error("run " + std::to_string(run_id) + " does not train on " +
                                 std::to_string(setup.world) + " ranks");
    }
    run::TrainObserver quiet;  // rank 0 records; this rank's summary goes to it
    run::CancelToken cancel;
    TrainOptions options;
    options.ranks = setup;
    return trainRun(spec, arm_index, seed, quiet, cancel, options);
}

}  // namespace ampbench::train
