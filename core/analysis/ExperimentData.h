#pragma once
// Everything the verdict and the reports read about one experiment, loaded from
// the store once so the analysis itself stays a pure function over plain data.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/config/ExperimentSpec.h"
#include "core/run/Numerics.h"
#include "core/store/Database.h"

namespace ampbench::analysis {

struct RunData {
    store::RunRow row;
    std::vector<run::StepRecord> steps;
    std::vector<run::EvalRecord> evals;
    std::vector<run::EventRecord> events;
    std::vector<run::NumericsRecord> numerics;  ///< per-layer rows (spec numerics_every)
};

struct ExperimentData {
    store::ExperimentRow experiment;
    config::ExperimentSpec spec;  ///< parsed from experiment.spec_json
    bool spec_ok = false;         ///< false when the stored spec did not parse cleanly
    std::vector<RunData> runs;    ///< in run-id order
    /// Max-batch searches tied to this experiment (find-batch results), oldest first.
    std::vector<store::BatchSearchRow> batch_searches;
    /// Runs elsewhere in the database that repeat one of these (`ampbench-cli rerun`).
    std::vector<RunData> reruns;
    std::string database_path;  ///< where it was loaded from, as an absolute path
};

/// Reads the experiment and every row of its runs; nullopt when the id does not exist.
std::optional<ExperimentData> loadExperiment(const store::Database& db, int64_t experiment_id);

/// Queued, running, interrupted or cancelled: the run's rows are partial, so the
/// analysis names it and leaves it out. Failed runs count: failing is a result.
bool isIncomplete(run::RunStatus status);

}  // namespace ampbench::analysis
