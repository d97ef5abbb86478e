#pragma once
// What the reader returns: rows of the store as plain structs.
#include <cstdint>
#include <string>
#include <vector>

#include "core/train/Records.h"

namespace ampbench::store {

struct ExperimentRow {
    int64_t id = 0;
    std::string name;
    std::string spec_json;  ///< the whole ExperimentSpec as JSON
    std::string notes;
    std::string created_at;  ///< ISO-8601 UTC
    int run_count = 0;
};

struct RunRow {
    int64_t id = 0;
    int64_t experiment_id = 0;
    std::string experiment_name;
    std::string arm;  ///< arm name
    int arm_index = 0;
    uint64_t seed = 0;
    std::string spec_json;  ///< the ArmSpec as JSON (resolved precision, scaled lr)
    std::string env_json;   ///< probe::Environment as JSON
    train::RunStatus status = train::RunStatus::Queued;
    std::string error;
    std::string notes;
    std::string started_at;  ///< ISO-8601 UTC, empty when never started
    std::string ended_at;
    int64_t last_step = 0;  ///< highest recorded optimizer step
    int64_t planned_steps = 0;
};

}  // namespace ampbench::store
