#pragma once
// The answer per arm: did it keep the baseline's training curve, and if not,
// what to check next. Decided from figures computed elsewhere; pure. Returns
// findings (codes and numbers); describe() in Finding.h writes the words.
#include <cstdint>
#include <string>
#include <vector>

#include "core/analysis/Alignment.h"
#include "core/analysis/Finding.h"
#include "core/analysis/Gains.h"
#include "core/analysis/Health.h"
#include "core/config/ExperimentSpec.h"

namespace ampbench::analysis {

enum class Verdict {
    Baseline,      ///< the arm the others are judged against
    Aligned,       ///< the final metric agrees within the tolerance (or, with no validation
                   ///< metric, the curve sits inside half the noise band)
    WithinNoise,   ///< no validation metric: the curve differs, but no more than the
                   ///< baseline's seeds differ among themselves
    Diverged,      ///< clearly outside the band, a significant final gap, or NaN/inf
    Inconclusive,  ///< noise unknown (one seed), too little data, or mixed evidence
    Pending,       ///< runs it needs (its own, the baseline's) are queued or training
    Cancelled      ///< every run of the arm was cancelled before it finished
};

std::string toString(Verdict v);  ///< "baseline", "aligned", "within noise", ...

/// What the arm ran with, as the checklist needs it.
struct ArmFacts {
    std::string baseline;  ///< name of the arm this one is judged against
    std::string device;    ///< "cpu" or "cuda:N": what a missing speed-up points to differs
    /// Resolved on the device: fp32, amp-fp16 or amp-bf16 (never amp).
    config::Precision precision = config::Precision::Fp32;
    int accumulation = 1;
    config::LrRule lr_rule = config::LrRule::Linear;
    double lr = kUnknown;         ///< after the LR rule
    double base_lr = kUnknown;    ///< the baseline arm's
    int64_t effective_batch = 0;  ///< micro-batch × K
    int64_t base_effective_batch = 0;
    std::string model;           ///< the experiment's model: mlp, cnn, resnet, transformer
    bool channels_last = false;  ///< the arm feeds convolutions NHWC tensors
    bool cuda_graph = false;     ///< the arm replays its step as a CUDA graph
    config::Fp8Recipe fp8_recipe = config::Fp8Recipe::Delayed;  ///< fp8 arms' scaling
    bool loss_scaling = true;  ///< fp16: false is the no-scaler negative control
    /// The baseline's settings again on other seeds (an A/A check): any difference
    /// is noise, so its verdict and speed-up measure the method's false alarms.
    bool aa_copy = false;
};

/// Where the lines between verdicts sit, in band units (1 = the edge of mean ± 2σ).
struct VerdictThresholds {
    double aligned = 0.5;          ///< last part within half the band (about ±1σ) on average
    double aligned_whole = 1.0;    ///< and the whole run inside the band on average
    double noise = 1.0;            ///< last part inside the band
    double diverged = 2.0;         ///< last part beyond twice the band
    double progress_lost = 0.5;    ///< one seed: gap ÷ the baseline's loss drop
    double trend_r = 0.7;          ///< slopes must correlate at least this well to be "aligned"
    double too_few_updates = 100;  ///< optimizer steps below which K > 1 cannot be judged
    double skip_share = 0.05;      ///< skipped steps (after calibration) that signal trouble
    double min_steps = 50;         ///< optimizer steps below which no arm is judged
    /// The final metric's tolerance is the larger of 2σ of the baseline's seeds and this
    /// margin (accuracy as a fraction: 0.005 = half a point; a loss in its units).
    double margin = 0;
};

/// How long an arm took to reach the baseline's final validation metric (MLPerf's
/// time to target): the mean over its runs that reached it.
struct TimeToTarget {
    bool accuracy = true;  ///< the target is an accuracy (higher is better), else a loss
    double target = kUnknown;
    int runs = 0, reached = 0;
    double wall_s = kUnknown, samples = kUnknown;
    double base_wall_s = kUnknown, base_samples = kUnknown;
};

struct ArmVerdict {
    std::string arm;
    Verdict verdict = Verdict::Inconclusive;
    bool noise_known = false;  ///< the baseline has two or more finished seeds
    int runs_used = 0;         ///< finished or failed runs of this arm
    int timing_passes = 0;     ///< runs that only timed the arm alone (left out)
    /// Runs of the arm still queued or training, and their seeds ("2, 3").
    int pending = 0;
    std::string pending_seeds;
    int cancelled = 0;  ///< runs of the arm cancelled before they finished
    /// The baseline's runs still queued or training, and their seeds: every other
    /// arm's verdict waits for them.
    int baseline_pending = 0;
    std::string baseline_pending_seeds;
    Finding summary;                   ///< the verdict and its main reason
    std::vector<Finding> reasons;      ///< the numbers behind it
    std::vector<Finding> next_checks;  ///< from the practitioners' checklist
    ArmFacts facts;
    CurveDeviation curve;
    FinalGap final_gap;
    Health health;
    Gains gains;
    TimeToTarget time_to_target;
};

/// Fills verdict, summary, reasons and next_checks from the other fields.
void decideVerdict(ArmVerdict& v, int baseline_seeds, const VerdictThresholds& t = {});

}  // namespace ampbench::analysis
