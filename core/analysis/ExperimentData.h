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

/// Why run `run`'s stored arm (runs.spec_json: the arm as planned, which the
/// verdict reads for precision, LR and batch) cannot be read: not JSON, a field of
/// the wrong type, or another arm's name; empty when it can. A field this build
/// does not know is no problem (a newer build wrote it). Without this check a
/// damaged record would read as the default arm, fp32, and the verdict would judge
/// it as such.
std::string storedArmProblem(const store::RunRow& run);

/// Queued, running, interrupted or cancelled: the run's rows are partial, so the
/// analysis names it and leaves it out. Failed runs count: failing is a result.
bool isIncomplete(run::RunStatus status);

/// Whether the run only timed its arm alone (its planned arm's timing_pass, an advice's
/// pass): the analysis reads its speed and memory and leaves it out of curves and verdicts.
bool timingPass(const store::RunRow& run);
/// A timing pass that ran to its end: its arm's speed and memory, not a curve.
bool finishedPass(const store::RunRow& run);

}  // namespace ampbench::analysis
