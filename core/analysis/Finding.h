#pragma once
// What the verdict found, as data: a code and the numbers (and names) it rests on.
// The analysis decides; describe() is the one place that turns a finding into a
// sentence, for the GUI, the reports and the CLI alike.
#include <iosfwd>
#include <map>
#include <string>
#include <vector>

namespace ampbench::analysis {

enum class FindingCode {
    // summaries: the verdict and its main reason
    BaselineWithNoise,     ///< seeds
    BaselineWithoutNoise,  ///<
    NoFinishedRun,         ///<
    BecameNonFinite,       ///<
    NoOverlap,             ///<
    FailedBeforeCurve,     ///<
    CurveNotOverlapping,   ///<
    DivergedFromBand,      ///< tail, above, final_significant; baseline
    AlignedWithBaseline,   ///< tail; baseline
    WithinSeedNoise,       ///< tail; baseline
    FinalDiffersOnly,      ///<
    OutsideBandUnclear,    ///< tail
    DivergedFromProgress,  ///< progress_lost, above; baseline
    NoiseUnknownSummary,   ///< baseline
    TooFewSteps,           ///< steps, min
    FinalWorse,            ///< accuracy, delta, tolerance, welch_p; baseline
    FinalBetter,           ///< accuracy, delta, tolerance; baseline
    FinalUnresolved,       ///< accuracy, delta, tolerance, seeds_needed; baseline
    AlignedCurveOffset,    ///< tail, above, accuracy, delta, tolerance; baseline
    LossScaleCollapsed,    ///< min_scale, late_skips
    // reasons: the numbers behind it
    RunFailed,         ///< failure ("seed 2: <stored error>")
    NonFiniteEvents,   ///< count
    SkippedSteps,      ///< skipped, late, longest_run, longest_start; where
    LossScaleRange,    ///< min, final
    OverflowOrigin,    ///< step, loss_scale, seed, count, located; name, where, dtype
    Gains,             ///< speedup, ci_low, ci_high, memory, process_memory, max_batch; baseline
    CurveInBandUnits,  ///< tail, above, whole, outside_share, seeds; baseline
    TrendAgreement,    ///< r
    FinalMetric,    ///< accuracy, arm, base, delta, base_sd, welch_p, units, judged, significant;
                    ///< baseline
    NoiseUnknown,   ///< baseline
    CurveRelative,  ///< tail, whole
    Tolerance,      ///< accuracy, tolerance, base_sd, margin
    TimeToTarget,   ///< accuracy, target, reached, runs, wall_s, samples, base_wall_s, base_samples
    AaCheck,        ///< speedup, ci_low, ci_high, across_runs; baseline
    // next checks: what to look at, from the practitioners' checklist
    ScalerMissing,        ///<
    LossScaleCollapsing,  ///< min_scale, late_skips
    OutOfMemory,          ///<
    InputBound,           ///< wait_share
    TryChannelsLast,      ///<
    NoSpeedup,            ///< cpu
    LrNotRescaled,        ///< k, batch, base_batch, lr
    TooFewUpdates,        ///< k, updates
    LinearLrTooLarge,     ///< lr, base_lr
    NormLayersInFp16,     ///<
    MeasureTheNoise,      ///<
    AaTimingDrift,        ///< speedup, ci_low, ci_high
    AaFalseAlarm,         ///< seeds; verdict, baseline
    PureFp16Control,      ///<
    NoScaleControl,       ///<
    // added later; reasons and next checks alike
    DeviceBusy,   ///< busy, device_ms, step_ms, runs, eager_pass (a reason)
    LaunchBound,  ///< busy, device_ms, step_ms, graph, eager_pass (a next check)
    /// step, share, scale, seed, saturated, recorded; name, format, recipe (a reason)
    Fp8Saturation,
    // summaries of arms whose runs have not all ended: the verdict waits for them
    ArmPending,          ///< runs, finished; seeds
    ArmCancelled,        ///< runs
    WaitingForBaseline,  ///< runs; seeds, baseline
    BaselinePending,     ///< runs, finished; seeds
    BaselineCancelled,   ///< runs
    TimedAloneOnly,      ///< passes (a summary: the arm was timed, not trained for the verdict)
};
/// The last code. Finding.cpp's table of names and sentences is held to every code up
/// to it at compile time: a new code goes after it, becomes this, and gets its entry.
constexpr FindingCode kLastFindingCode = FindingCode::TimedAloneOnly;

/// The numbers and names a finding rests on, by key: a misspelt key does not
/// compile. keyName() is the name the JSON export and the reports use ("tail").
enum class FindingKey {
    Above,
    Accuracy,
    AcrossRuns,
    Arm,
    Base,
    BaseBatch,
    BaseLr,
    BaseSamples,
    BaseSd,
    BaseWallS,
    Baseline,
    Batch,
    Busy,
    CiHigh,
    CiLow,
    Count,
    Cpu,
    Delta,
    DeviceMs,
    Dtype,
    EagerMemory,
    EagerPass,
    EagerSpeedup,
    Error,
    Final,
    FinalSignificant,
    Finished,
    Format,
    Graph,
    IsBaseline,
    Judged,
    K,
    Kind,
    Late,
    LateSkips,
    Located,
    LongestRun,
    LongestStart,
    LossScale,
    Lr,
    Margin,
    MaxBatch,
    Memory,
    Min,
    MinScale,
    Name,
    OutsideShare,
    Passes,
    ProcessMemory,
    ProgressLost,
    R,
    Reached,
    Recipe,
    Recorded,
    Runs,
    Samples,
    Saturated,
    Scale,
    Seed,
    Seeds,
    SeedsNeeded,
    Share,
    Significant,
    Skipped,
    Speedup,
    Step,
    StepMs,
    Steps,
    Tail,
    Target,
    Timing,
    Tolerance,
    Units,
    Updates,
    ValidationLoss,
    Verdict,
    WaitShare,
    WallS,
    WelchP,
    Where,
    Whole,
};
const char* keyName(FindingKey key);

struct Finding {
    FindingCode code = FindingCode::NoFinishedRun;
    std::map<FindingKey, double> values;      ///< the numbers
    std::map<FindingKey, std::string> names;  ///< arm names, seeds, stored error text

    /// NaN when absent.
    double value(FindingKey key) const;
    /// Empty when absent.
    std::string name(FindingKey key) const;
};

/// The sentence for a finding.
std::string describe(const Finding& finding);
std::vector<std::string> describeAll(const std::vector<Finding>& findings);
/// A stable name for the code, for JSON ("scaler_missing").
std::string codeName(FindingCode code);
/// Writes describe(finding): test messages and logs.
std::ostream& operator<<(std::ostream& out, const Finding& finding);

}  // namespace ampbench::analysis
