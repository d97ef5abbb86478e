#pragma once
// Numerical and input health of an arm's runs: skipped steps, the loss scale,
// non-finite values, failures, and how much of the step time went to waiting for data.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/analysis/Alignment.h"
#include "core/analysis/ExperimentData.h"
#include "core/run/Numerics.h"

namespace ampbench::analysis {

/// Above this share of step time spent waiting for data, an arm is input-bound.
inline constexpr double kInputBoundShare = 0.20;
/// Below this share of the step the device is busy, an arm is launch-bound: the host
/// sets the pace and faster device arithmetic cannot shorten the step.
inline constexpr double kLaunchBoundShare = 0.60;

struct Health {
    int runs = 0;
    int64_t steps = 0;    ///< optimizer steps over all the arm's runs
    int64_t skipped = 0;  ///< steps the loss scaler skipped (inf/NaN gradients)
    double skipped_share = kUnknown;
    int64_t early_skipped = 0;       ///< skips in a run's first 10% of steps (scale calibrating)
    std::string skipped_where;       ///< "seed 1: steps 1–4, 230; seed 2: step 7"
    int64_t longest_skip_run = 0;    ///< most consecutive skipped steps in one run
    int64_t longest_skip_start = 0;  ///< the step that run started at
    double min_loss_scale = kUnknown;
    double final_loss_scale = kUnknown;  ///< lowest over runs of the last step's scale
    bool scaler_active = false;          ///< some step used a loss scale other than 1
    int nonfinite_events = 0;
    int oom_events = 0;
    int warning_events = 0;
    struct Failure {
        uint64_t seed = 0;
        run::FailureKind kind = run::FailureKind::None;  ///< why, as data
        std::string error;                               ///< what the run recorded
    };
    std::vector<Failure> failures;  ///< the arm's failed runs
    /// Where non-finite steps broke first, as the locator recorded them (numerics on).
    struct Located {
        uint64_t seed = 0;
        run::OverflowOrigin origin;
    };
    std::vector<Located> overflow_origins;
    double data_wait_share = kUnknown;  ///< data wait ÷ step time over timed steps
    bool input_bound = false;           ///< data_wait_share > kInputBoundShare
    /// The device time of one step's work (DeviceBusy events) ÷ the run's median timed
    /// step time, the median over the runs that measured it; kUnknown where none did
    /// (the CPU, data-parallel runs, a probe that could not count).
    double device_busy_share = kUnknown;
    double device_ms = kUnknown;     ///< median over those runs of the step's device time
    double busy_step_ms = kUnknown;  ///< and of their median step time
    int busy_runs = 0;
    bool launch_bound = false;  ///< device_busy_share < kLaunchBoundShare
    /// FP8 casts that saturated (kind `cast` numerics rows with values clipped at the
    /// format's largest): the first one by step, and how many recorded casts did.
    struct Saturation {
        uint64_t seed = 0;
        int64_t step = 0;
        std::string name;    ///< "blocks.3.fc1:input"
        std::string format;  ///< "e4m3"
        double share = 0;    ///< of its values
        double scale = 1;    ///< the scale it was cast with
    };
    std::optional<Saturation> fp8_saturated;  ///< the arm's first, over its runs
    int64_t saturated_casts = 0;              ///< recorded casts with any value saturated
    int64_t recorded_casts = 0;               ///< recorded casts, over the arm's runs
    /// The share came from the arm's eager pass alone (a fast verdict's packed runs
    /// measure nothing of their own), not from the runs as they trained.
    bool busy_from_eager_pass = false;
};

Health armHealth(const std::vector<const RunData*>& runs);

/// "1–4, 230, 600–602": consecutive steps folded into ranges, at most `max_items` items.
std::string describeSteps(const std::vector<int64_t>& steps, size_t max_items = 8);

}  // namespace ampbench::analysis
