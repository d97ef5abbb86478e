#pragma once
// Did a rerun repeat its original? Per-step losses compared bit for bit, and, where
// they differ, the rerun's curve and final metric against the seed-noise band of
// the original's arm. Pure functions over loaded rows, and a loader.
#include <cstdint>
#include <string>
#include <vector>

#include "core/analysis/Alignment.h"
#include "core/analysis/ExperimentData.h"

namespace ampbench::analysis {

enum class RerunAgreement {
    Identical,     ///< every loss and evaluation bit for bit
    WithinNoise,   ///< differs, but inside the arm's seed band (curve and final metric)
    Different,     ///< outside the arm's seed band
    NoiseUnknown,  ///< differs; the arm ran one seed, so there is no band to judge by
    Incomplete,    ///< the rerun or the original did not finish: nothing judged
};
std::string toString(RerunAgreement a);  ///< "identical", "within noise", ...

struct RerunComparison {
    int64_t original_run = 0;
    int64_t rerun = 0;
    int64_t rerun_experiment = 0;
    std::string arm;
    uint64_t seed = 0;
    bool deterministic = false;  ///< the original's experiment ran in deterministic mode
    RerunAgreement agreement = RerunAgreement::Incomplete;
    int64_t steps_compared = 0;      ///< steps both runs recorded
    int64_t steps_identical = 0;     ///< of those, with bit-identical losses
    int64_t first_difference = 0;    ///< first step whose loss differs; 0 when none
    double max_loss_difference = 0;  ///< largest |Δ loss| over the compared steps
    int band_seeds = 0;              ///< finished runs of the arm in the original experiment
    double curve_units = kUnknown;   ///< mean |rerun − arm mean| / 2 sd over the last quarter
    std::string metric;              ///< "val_accuracy", "val_loss" or "train_loss"
    double final_original = kUnknown, final_rerun = kUnknown;
    double final_units = kUnknown;  ///< |rerun − arm mean| / 2 sd of the arm's seeds
    std::string sentence;           ///< what a reader is told
};

/// `arm_runs`: the original experiment's runs of the same arm (the original among them).
RerunComparison compareRerun(const RunData& original, const RunData& rerun,
                             const std::vector<const RunData*>& arm_runs, bool deterministic);

/// Every rerun in `data.reruns`, compared with its original among `data.runs`.
std::vector<RerunComparison> compareReruns(const ExperimentData& data);

/// Every rerun of a run of experiment `experiment_id`, compared with its original.
std::vector<RerunComparison> rerunsOfExperiment(const store::Database& db, int64_t experiment_id);

/// The comparison for one rerun run; nullopt-like empty vector when `rerun_id` is not a rerun.
std::vector<RerunComparison> rerunComparison(const store::Database& db, int64_t rerun_id);

/// The command that reruns a run: "ampbench-cli --db PATH rerun ID", PATH absolute and
/// quoted for a POSIX shell when it needs to be.
std::string rerunCommand(const std::string& db_path, int64_t run_id);

}  // namespace ampbench::analysis
