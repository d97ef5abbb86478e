#pragma once
// Per-run and per-arm figures: what the CLI table, the GUI's compare view and
// the reports show. Pure functions over rows read from the store.
#include <cstdint>
#include <string>
#include <vector>

#include "core/store/Database.h"

namespace ampbench::analysis {

struct RunSummary {
    int64_t run_id = 0;
    std::string arm;
    uint64_t seed = 0;
    run::RunStatus status = run::RunStatus::Queued;
    int64_t steps = 0;          ///< optimizer steps recorded
    int64_t timed_steps = 0;    ///< steps after warm-up
    int64_t samples = 0;        ///< samples seen at the last step
    double median_step_ms = 0;  ///< over timed steps
    double p10_step_ms = 0, p90_step_ms = 0;
    double median_ms_per_sample = 0;  ///< step time / samples in that step
    double samples_per_s = 0;         ///< timed samples / timed step time
    int64_t peak_mem = 0;             ///< highest mem_peak recorded
    double final_val_accuracy = 0;    ///< NaN when the run has no eval
    double final_val_loss = 0;
    double final_train_loss = 0;  ///< mean of the last 10% of steps
    int64_t skipped = 0;
    double min_loss_scale = 0;
    double data_wait_share = 0;  ///< data wait / step time over timed steps
    double wall_s = 0;
};

/// `fused_group`: how many runs shared the run's step times (run::fusedGroupSize of its
/// events): a fused step trained the samples of every member at once, so its time per
/// sample and samples/s count them all, as the speed-up does, and its peak memory is its
/// share of the group's (÷ fused_group).
RunSummary summarizeRun(const store::RunRow& run, const std::vector<run::StepRecord>& steps,
                        const std::vector<run::EvalRecord>& evals, int fused_group = 1);

/// Whether a run's figures count: it finished and recorded steps. The summary
/// tables and the verdict (its gains, curves and gaps) take exactly these runs, so
/// a cancelled, failed or interrupted run never moves a figure that the verdict
/// does not use.
bool entersFigures(run::RunStatus status, int64_t steps);

/// An arm's figures over its runs that enter them (entersFigures); NaN (shown
/// "–") and 0 bytes when it has none.
struct ArmSummary {
    std::string arm;
    int runs = 0;               ///< every run of the arm
    int finished = 0;           ///< the runs its figures come from
    double median_step_ms = 0;  ///< median over the arm's runs' medians
    double p10_step_ms = 0, p90_step_ms = 0;
    double samples_per_s = 0;    ///< mean over runs
    int64_t peak_mem = 0;        ///< max over runs
    double val_accuracy = 0;     ///< mean final accuracy
    double val_accuracy_sd = 0;  ///< NaN with one run
    int64_t skipped = 0;
    double data_wait_share = 0;
    double ms_per_sample = 0;               ///< mean over runs of each run's median time per sample
    std::vector<double> run_ms_per_sample;  ///< each run's median time per sample
    double speedup = 0;       ///< speedupOf (Gains.h): the baseline's ms per sample ÷ this
    double memory_ratio = 0;  ///< peak memory ÷ baseline's; NaN when either has none
};

/// Groups run summaries by arm in first-seen order; ratios against `baseline`
/// (the first arm when empty or not found).
std::vector<ArmSummary> summarizeArms(const std::vector<RunSummary>& runs,
                                      const std::string& baseline = {});

/// Reads every run of an experiment and summarises it.
std::vector<RunSummary> summarizeExperimentRuns(const store::Database& db, int64_t experiment_id);

}  // namespace ampbench::analysis
