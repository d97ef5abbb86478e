#pragma once
// The whole judgement of one experiment: summaries, the baseline's noise band,
// each arm's curve, health, gains and verdict. What the reports, the GUI's
// verdict panel and `ampbench-cli report` show. A pure function over loaded data.
#include <cstdint>
#include <string>
#include <vector>

#include "core/analysis/Alignment.h"
#include "core/analysis/ExperimentData.h"
#include "core/analysis/MetricBand.h"
#include "core/analysis/Reproduction.h"
#include "core/analysis/Summary.h"
#include "core/analysis/Verdict.h"

namespace ampbench::analysis {

struct AnalysisOptions {
    std::string baseline;         ///< arm to judge against; empty = the spec's first arm
    double smoothing = 0.05;      ///< EMA horizon as a share of the samples the curves span
    size_t grid_points = 100;     ///< points of the common samples-seen axis
    double tail_fraction = 0.25;  ///< "the last part" of a run
    VerdictThresholds thresholds;
};

/// An arm's mean smoothed loss on the band's grid.
struct ArmCurve {
    std::string arm;
    int runs = 0;
    std::vector<double> mean;
};

/// A run left out because its rows are partial.
struct IncompleteRun {
    int64_t run_id = 0;
    std::string arm;
    uint64_t seed = 0;
    run::RunStatus status = run::RunStatus::Queued;
    int64_t last_step = 0;
    int64_t planned_steps = 0;
    std::string describe() const;  ///< "run 7 (amp, seed 2): interrupted at step 20 of 48"
};

struct ExperimentAnalysis {
    int64_t experiment_id = 0;
    std::string name;
    std::string baseline;
    std::string device;            ///< "cpu" or "cuda:0", from the runs' environment
    std::string memory_label;      ///< memoryLabel of the runs: "peak allocated" (CUDA),
                                   ///< "peak in tensors" (CPU), "peak RSS" (older CPU runs)
    std::vector<RunSummary> runs;  ///< finished and failed runs
    /// Every arm in spec order (then arms found only in runs): an arm's place here
    /// is its colour in every plot, whichever arm is the baseline.
    std::vector<std::string> arm_order;
    std::vector<ArmSummary> arms;  ///< in spec order, the baseline first
    NoiseBand band;
    std::vector<ArmCurve> arm_curves;  ///< on band.x, one per arm with finished runs
    std::vector<RunCurve> run_curves;  ///< every finished or failed run, on its own x
    /// "val_accuracy" when every finished run evaluated with an accuracy, "val_loss"
    /// when they evaluated without one, empty when none evaluated.
    std::string validation_metric;
    std::vector<MetricBand> validation;  ///< one per arm with evaluations, spec order
    std::vector<ArmVerdict> verdicts;    ///< one per arm, spec order; the baseline first
    std::vector<IncompleteRun> incomplete;
    std::vector<std::string> warnings;  ///< things that weaken the comparison
    /// Why a run of this experiment would not repeat bit for bit (deterministic mode
    /// off); empty when it ran deterministic.
    std::string reproducibility;
    /// Each rerun of a run of this experiment against its original.
    std::vector<RerunComparison> reruns;
};

ExperimentAnalysis analyzeExperiment(const ExperimentData& data,
                                     const AnalysisOptions& options = {});

/// Arm names in spec order (falling back to first-seen order of the runs).
std::vector<std::string> armOrder(const ExperimentData& data);

}  // namespace ampbench::analysis
