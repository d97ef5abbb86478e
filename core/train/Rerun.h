#pragma once
// Training a recorded run again: the spec it was planned with, reduced to its arm
// and seed, and what differs now from when it ran (files, environment, plan).
#include <cstdint>
#include <string>
#include <vector>

#include "core/config/ExperimentSpec.h"
#include "core/store/Database.h"

namespace ampbench::train {

struct RerunPlan {
    store::RunRow original;       ///< the run asked for
    int64_t link_to = 0;          ///< the run the rerun is recorded against: the first original
    config::ExperimentSpec spec;  ///< one arm, one seed: what the original trained
    bool deterministic = false;   ///< the original ran in deterministic mode
};

/// Reads run `run_id` and its experiment's spec. A rerun of a rerun is linked to the
/// first original, so that every repeat is compared with the same run. Throws
/// store::StoreError(NotFound) when there is no such run, SpecError when the stored
/// spec has errors or no longer names the run's arm.
RerunPlan planRerun(const store::Database& db, int64_t run_id);

/// Why the rerun may not train what the original trained, a sentence each: files that
/// changed since (checksums), an environment that differs (device, driver, CUDA,
/// cuDNN, LibTorch, ampbench commit; on the CPU its model and threads), and an arm
/// this build would plan differently. `device` is where the rerun will train, after
/// checkSetup has applied the spec's CPU threads. Empty when nothing differs.
std::vector<std::string> rerunDifferences(const RerunPlan& plan, const std::string& device);

}  // namespace ampbench::train
