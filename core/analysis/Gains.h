#pragma once
// What an arm bought against the baseline: time per sample, throughput, memory.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/analysis/Alignment.h"
#include "core/analysis/ExperimentData.h"
#include "core/analysis/Statistics.h"

namespace ampbench::analysis {

/// The one definition of speed-up, in every table: the baseline's time per sample ÷
/// the arm's, where an arm's time per sample is the mean over its runs of each run's
/// median over its timed steps (step time ÷ samples in the step). > 1: faster.
double speedupOf(const std::vector<double>& base_run_ms_per_sample,
                 const std::vector<double>& arm_run_ms_per_sample);

struct Gains {
    double speedup = kUnknown;  ///< speedupOf the runs' median ms per sample (> 1: faster)
    /// 95%: across runs (Welch on log time per sample) when both arms have two or more
    /// runs, else within one run (bootstrap over per-step times: run-to-run variation,
    /// such as a machine's load drifting between runs, is not in it).
    Interval speedup_ci{kUnknown, kUnknown};
    bool ci_across_runs = false;
    double ms_per_sample = kUnknown;  ///< mean over the arm's runs of their medians
    double base_ms_per_sample = kUnknown;
    double median_step_ms = kUnknown;  ///< one optimizer step (K micro-batches)
    double samples_per_s = kUnknown;   ///< timed samples ÷ timed step time, all runs
    double base_samples_per_s = kUnknown;
    double throughput_ratio = kUnknown;  ///< samples/s ÷ the baseline's
    int64_t peak_mem = 0;                ///< highest over the arm's runs
    int64_t base_peak_mem = 0;
    double memory_ratio = kUnknown;  ///< peak ÷ the baseline's (< 1: saves memory)
    /// The arm's or the baseline's peaks are a process's resident set (CPU runs recorded
    /// before runs counted their own tensors, training scripts): they include the
    /// program's own memory, so the ratio understates the difference.
    bool process_memory = false;
    int64_t timed_steps = 0;
    int64_t optimizer_steps = 0;  ///< per run (the most any run of the arm made)
    int64_t max_batch = 0;        ///< largest micro-batch found by find-batch; 0 = not searched
    int64_t base_max_batch = 0;
    double max_batch_ratio = kUnknown;  ///< max_batch ÷ the baseline's, when both were searched
    /// Where the speed and memory figures come from: "" = the runs' own timed steps;
    /// "graph" or "eager" = each arm's pass alone on the GPU in that mode (spec
    /// fast_verdict: its runs were packed, so their own times are not the GPU's alone).
    std::string timing_mode;
    double eager_speedup = kUnknown;  ///< timing_mode "graph": the eager passes' speed-up
    double eager_memory_ratio = kUnknown;
};

/// Time per sample of every timed step (step time ÷ samples in that step; for a member
/// of fused seeds ÷ the samples of every member, which its fused step trained at once).
std::vector<double> msPerSample(const RunData& run);

/// Percentile-bootstrap interval of median(a) ÷ median(b), resampling both sides.
/// Deterministic: a fixed seed, so a report reads the same every time.
Interval bootstrapMedianRatio(const std::vector<double>& a, const std::vector<double>& b,
                              int resamples = 1000, uint64_t seed = 20240611,
                              double confidence = 0.95);

Gains computeGains(const std::vector<const RunData*>& baseline,
                   const std::vector<const RunData*>& arm);

/// An arm's passes alone on the device in `mode` ("graph" or "eager"), read from the
/// alone_timing events of its runs, each as a run of its timed steps (so that
/// computeGains measures them as it measures runs); a finished timing-pass run (an
/// advice's, timingPass) is an eager pass of its own timed steps. Empty when the runs
/// hold none.
std::vector<RunData> alonePasses(const std::vector<const RunData*>& runs, const std::string& mode);

/// Gains from the arms' passes alone: in graph mode where both arms have a pass in
/// it (with the eager passes' figures beside), else eager; nullopt when either arm
/// has none. Steps per run (optimizer_steps) are left to the caller.
std::optional<Gains> aloneGains(const std::vector<const RunData*>& baseline,
                                const std::vector<const RunData*>& arm);

}  // namespace ampbench::analysis
