#include "core/analysis/Verdict.h"

#include <algorithm>
#include <cmath>

#include "core/analysis/Format.h"

namespace ampbench::analysis {
namespace {

constexpr const char* kMinus = "\xE2\x88\x92";  // U+2212, reads better than '-' in prose
constexpr const char* kSigma = "\xCF\x83";
constexpr const char* kDelta = "\xCE\x94";

std::string num(double v, int decimals) {
    return formatNumber(v, decimals);
}

std::string signedNum(double v, int decimals) {
    if (!std::isfinite(v)) {
        return formatNumber(v, decimals);
    }
    return (v < 0 ? std::string(kMinus) : std::string("+")) + formatNumber(std::fabs(v), decimals);
}

/// "0.00012" or "65536": loss scales span many decades.
std::string scaleText(double v) {
    if (!std::isfinite(v)) {
        return formatNumber(v, 0);
    }
    return v >= 1 ? formatNumber(v, 0) : formatNumber(v, 6);
}

bool isAmp(const ArmFacts& f) {
    return f.precision != config::Precision::Fp32;
}

bool failedNonFinite(const std::vector<run::FailureKind>& kinds) {
    return std::find(kinds.begin(), kinds.end(), run::FailureKind::NonFinite) != kinds.end();
}

std::string describeFinal(const FinalGap& g, const std::string& baseline) {
    if (g.arm.empty() || g.base.empty()) {
        return {};
    }
    const bool acc = g.metric == "val_accuracy";
    const double scale = acc ? 100.0 : 1.0;
    const int dec = acc ? 2 : 4;
    std::string text = acc ? "final validation accuracy " + formatPercent(g.arm_mean, 2) + " vs " +
                                 formatPercent(g.base_mean, 2) + " for " + baseline
                           : "final training loss " + num(g.arm_mean, 4) + " vs " +
                                 num(g.base_mean, 4) + " for " + baseline;
    text +=
        std::string(" (") + kDelta + " " + signedNum(g.delta * scale, dec) + (acc ? " points" : "");
    if (std::isfinite(g.base_sd)) {
        text += std::string(", seed ") + kSigma + " " + num(g.base_sd * scale, dec);
    }
    if (g.welch.valid) {
        text += ", Welch p = " + num(g.welch.p, 3);
    } else if (std::isfinite(g.units)) {
        text += ", " + num(g.units, 2) + " \xC3\x97 2" + kSigma;
    }
    return text + ")";
}

/// Health findings every arm gets, the baseline included.
void addHealth(ArmVerdict& v, const VerdictThresholds& t) {
    const Health& h = v.health;
    const ArmFacts& f = v.facts;
    for (const auto& failure : h.failures) {
        v.reasons.push_back("run failed \xE2\x80\x94 " + failure);
    }
    if (h.nonfinite_events > 0) {
        v.reasons.push_back(std::to_string(h.nonfinite_events) +
                            " non-finite (NaN/inf) loss event" +
                            (h.nonfinite_events > 1 ? "s" : "") + " recorded");
    }
    const int64_t late_skips = h.skipped - h.early_skipped;
    const double late_share =
        h.steps > 0 ? static_cast<double>(late_skips) / static_cast<double>(h.steps) : 0.0;
    if (h.skipped > 0) {
        std::string text = std::to_string(h.skipped) + " skipped step" +
                           (h.skipped > 1 ? "s" : "") + " (" + h.skipped_where + ")";
        if (late_skips == 0) {
            text += ", all in the first 10% of steps while the scaler calibrated: normal";
        } else {
            text += "; longest run " + std::to_string(h.longest_skip_run) + " from step " +
                    std::to_string(h.longest_skip_start);
        }
        v.reasons.push_back(text);
    }
    if (h.scaler_active && std::isfinite(h.min_loss_scale)) {
        v.reasons.push_back("loss scale: minimum " + scaleText(h.min_loss_scale) + ", at the end " +
                            scaleText(h.final_loss_scale));
    }
    if (f.precision == config::Precision::AmpFp16 && !h.scaler_active && h.steps > 0) {
        v.next_checks.push_back(
            "Scaler missing: this fp16 arm ran with a loss scale of 1 throughout; small "
            "gradients underflow to zero in fp16. Enable dynamic loss scaling.");
    }
    const bool collapsing =
        h.scaler_active && (h.min_loss_scale < 1.0 || late_share > t.skip_share ||
                            (late_skips > 0 && h.longest_skip_run >= 5));
    if (collapsing) {
        v.next_checks.push_back(
            "Loss scale collapsing: the scale fell to " + scaleText(h.min_loss_scale) + " with " +
            std::to_string(late_skips) +
            " skipped steps after calibration. Something overflows in every step (often a norm "
            "layer, softmax or loss forced to fp16, or very large logits): keep those in fp32, "
            "clip gradients after unscaling, or try bf16.");
    }
    if (h.oom_events > 0) {
        v.next_checks.push_back(
            "Out of memory: lower the micro-batch, use accumulation, or enable activation "
            "checkpointing.");
    }
    if (h.input_bound) {
        v.next_checks.push_back(
            "Input-bound: the trainer waited for data " + formatPercent(h.data_wait_share) +
            " of the step time, so the data loader limits any AMP speed-up. "
            "Raise prefetch, speed up decoding, or keep the data on the device.");
    }
}

/// What the arm bought, in one line, and a check when AMP made it slower.
void addGains(ArmVerdict& v) {
    const Gains& g = v.gains;
    if (!std::isfinite(g.speedup)) {
        return;
    }
    std::string text =
        "speed-up " + num(g.speedup, 2) + "\xC3\x97 in time per sample against " + v.facts.baseline;
    if (std::isfinite(g.speedup_ci.low) && std::isfinite(g.speedup_ci.high)) {
        text += " (95% CI " + num(g.speedup_ci.low, 2) + "\xE2\x80\x93" +
                num(g.speedup_ci.high, 2) + ")";
    }
    if (std::isfinite(g.memory_ratio)) {
        text += "; peak memory " + num(g.memory_ratio, 2) + "\xC3\x97";
    }
    if (std::isfinite(g.max_batch_ratio)) {
        text += "; max batch " + num(g.max_batch_ratio, 2) + "\xC3\x97";
    }
    v.reasons.push_back(text);
    const bool cuda = v.facts.device.rfind("cuda", 0) == 0;
    const bool convolutional = v.facts.model == "cnn" || v.facts.model == "resnet";
    if (isAmp(v.facts) && cuda && convolutional && !v.facts.channels_last) {
        v.next_checks.push_back(
            "Try channels_last for this arm: under autocast, convolutions on NHWC tensors "
            "use the tensor-core kernels directly, without layout conversions around each "
            "convolution; for ResNet-style models on a recent GPU this can nearly halve the "
            "step time. fp32 arms gain nothing.");
    }
    if (isAmp(v.facts) && g.speedup_ci.high < 1.0) {
        const bool cpu = v.facts.device.rfind("cuda", 0) != 0;
        v.next_checks.push_back(
            std::string("No speed-up: this AMP arm is slower per sample. ") +
            (cpu ? "On CPU, bf16 autocast pays off only with native bf16 units (AMX or "
                   "AVX-512 BF16); elsewhere the casts cost more than they save. Judge speed on "
                   "the GPU."
                 : "Check that matrix dimensions and channels are multiples of 8 (tensor cores), "
                   "that the model is large enough not to be launch-bound (try cuda_graph), and "
                   "that cudnn_benchmark is on."));
    }
}

void addChecklist(ArmVerdict& v, const VerdictThresholds& t) {
    const ArmFacts& f = v.facts;
    const bool judged_bad =
        v.verdict == Verdict::Diverged || (v.verdict == Verdict::Inconclusive && v.noise_known);
    if (f.accumulation > 1 && f.lr_rule == config::LrRule::None &&
        f.effective_batch != f.base_effective_batch) {
        v.next_checks.push_back(
            "LR not rescaled for the effective batch: K = " + std::to_string(f.accumulation) +
            " makes the batch " + std::to_string(f.effective_batch) + " (baseline " +
            std::to_string(f.base_effective_batch) + ") at the same lr " + num(f.lr, 4) +
            " with lr_rule none, so each sample moves the weights less. Use lr_rule linear or "
            "sqrt, or compare against a baseline with the same effective batch.");
    }
    if (f.accumulation > 1 && static_cast<double>(v.gains.optimizer_steps) < t.too_few_updates) {
        v.next_checks.push_back(
            "Too few optimizer updates: K = " + std::to_string(f.accumulation) + " leaves " +
            std::to_string(v.gains.optimizer_steps) +
            " updates per run; curves over samples seen cannot be expected to match after so "
            "few steps. Train longer before judging this arm.");
    }
    if (f.accumulation > 1 && f.lr_rule == config::LrRule::Linear &&
        v.verdict == Verdict::Diverged) {
        v.next_checks.push_back("Linear LR scaling gave lr " + num(f.lr, 4) + " (baseline " +
                                num(f.base_lr, 4) +
                                "); that may be too large for this model. Try lr_rule sqrt or an "
                                "LR warm-up.");
    }
    if (isAmp(f) && judged_bad && f.accumulation == 1) {
        v.next_checks.push_back(
            "Norm layers in fp16: check that BatchNorm/LayerNorm and the loss run in fp32 under "
            "autocast (a manual .half() or a custom layer casts them down).");
    }
}

void decideWithNoise(ArmVerdict& v, int seeds, const std::string& base,
                     const VerdictThresholds& t) {
    const CurveDeviation& c = v.curve;
    const FinalGap& g = v.final_gap;
    std::string band = "band units (1 = the edge of " + base + "'s mean \xC2\xB1 2" + kSigma +
                       " over " + std::to_string(seeds) + " seeds)";
    if (std::isfinite(c.tail_mean_abs)) {
        v.reasons.push_back("loss curve over the last 25% of samples: " + num(c.tail_mean_abs, 2) +
                            " " + band + ", " + (c.tail_signed > 0 ? "above" : "below") +
                            " the baseline; whole run " + num(c.whole_mean_abs, 2) + ", " +
                            formatPercent(c.outside_share, 0) + " of points outside the band");
    }
    if (std::isfinite(c.trend_r)) {
        v.reasons.push_back("trend agreement r = " + num(c.trend_r, 2) +
                            " (correlation of the smoothed slopes)");
    }
    const std::string fin = describeFinal(g, base);
    if (!fin.empty()) {
        v.reasons.push_back(
            fin + (g.significant ? ": beyond the seed spread" : ": within the seed spread"));
    }
    const double tail = c.tail_mean_abs;
    if (!std::isfinite(tail)) {
        v.verdict = Verdict::Inconclusive;
        v.summary = "its curve does not overlap the baseline's on samples seen";
        return;
    }
    const bool trend_ok = !std::isfinite(c.trend_r) || c.trend_r >= t.trend_r;
    if (tail > t.diverged || (g.significant && tail > t.noise)) {
        v.verdict = Verdict::Diverged;
        v.summary = "the loss curve ends " + num(tail, 1) + " band widths " +
                    (c.tail_signed > 0 ? "above" : "below") + " " + base +
                    (g.significant ? ", and the final metric differs beyond the seed spread" : "");
    } else if (tail <= t.aligned && c.whole_mean_abs <= t.aligned_whole && !g.significant &&
               trend_ok) {
        v.verdict = Verdict::Aligned;
        v.summary = "the loss curve stays on " + base + "'s (" + num(tail, 2) +
                    " band widths at the end) and the final metric agrees";
    } else if (tail <= t.noise && !g.significant) {
        v.verdict = Verdict::WithinNoise;
        v.summary = "it differs from " + base + " by about as much as " + base +
                    "'s own seeds do (" + num(tail, 2) + " band widths at the end)";
    } else {
        v.verdict = Verdict::Inconclusive;
        v.summary = g.significant ? "the curves agree within the band but the final metric differs "
                                    "beyond the seed spread"
                                  : "the curve ends " + num(tail, 1) +
                                        " band widths away: outside the noise band, but not "
                                        "clearly diverged; more seeds or a longer run will tell";
    }
}

void decideWithoutNoise(ArmVerdict& v, const std::string& base, const VerdictThresholds& t) {
    const CurveDeviation& c = v.curve;
    v.reasons.push_back(base +
                        " ran with one finished seed, so the seed noise is unknown and the gap "
                        "cannot be judged against it");
    if (std::isfinite(c.relative_tail)) {
        v.reasons.push_back("loss curve over the last 25% of samples differs by " +
                            formatPercent(c.relative_tail) + " on average (whole run " +
                            formatPercent(c.relative_whole) + ")");
    }
    if (std::isfinite(c.trend_r)) {
        v.reasons.push_back("trend agreement r = " + num(c.trend_r, 2) +
                            " (correlation of the smoothed slopes)");
    }
    const std::string fin = describeFinal(v.final_gap, base);
    if (!fin.empty()) {
        v.reasons.push_back(fin);
    }
    if (std::isfinite(c.progress_lost) && std::fabs(c.progress_lost) > t.progress_lost) {
        v.verdict = Verdict::Diverged;
        v.summary = "its loss ends " + formatPercent(std::fabs(c.progress_lost), 0) + " of " +
                    base + "'s whole loss drop " + (c.progress_lost > 0 ? "above" : "below") +
                    " it: too far apart for seed noise to explain";
        return;
    }
    v.verdict = Verdict::Inconclusive;
    v.summary = "noise unknown: " + base + " ran with one seed";
    v.next_checks.push_back(
        "Measure the noise: repeat the experiment with three seeds "
        "(--seeds 1 2 3, or the noise-band preset) so the gap can be judged "
        "against the seed spread.");
}

}  // namespace

std::string toString(Verdict v) {
    switch (v) {
        case Verdict::Baseline:
            return "baseline";
        case Verdict::Aligned:
            return "aligned";
        case Verdict::WithinNoise:
            return "within noise";
        case Verdict::Diverged:
            return "diverged";
        case Verdict::Inconclusive:
            return "inconclusive";
    }
    return "inconclusive";
}

void decideVerdict(ArmVerdict& v, int baseline_seeds, const VerdictThresholds& t) {
    v.reasons.clear();
    v.next_checks.clear();
    v.noise_known = baseline_seeds >= 2;
    if (v.verdict == Verdict::Baseline) {
        v.summary = baseline_seeds >= 2 ? "the reference; its " + std::to_string(baseline_seeds) +
                                              " seeds give the noise band"
                                        : "the reference; one seed, so the noise band is unknown";
        addHealth(v, t);
        return;
    }
    const std::string base = v.facts.baseline.empty() ? "the baseline" : v.facts.baseline;
    const bool nonfinite = v.health.nonfinite_events > 0 || failedNonFinite(v.health.failure_kinds);
    if (v.runs_used == 0) {
        v.verdict = Verdict::Inconclusive;
        v.summary = "no finished run of this arm to judge";
    } else if (nonfinite) {
        v.verdict = Verdict::Diverged;
        v.summary = "the training loss became NaN/inf";
    } else if (!std::isfinite(v.curve.relative_whole)) {
        v.verdict = Verdict::Inconclusive;
        v.summary = v.health.failures.empty() ? "no loss curve that overlaps the baseline's"
                                              : "its runs failed before a curve could be compared";
    } else if (v.noise_known) {
        decideWithNoise(v, baseline_seeds, base, t);
    } else {
        decideWithoutNoise(v, base, t);
    }
    addGains(v);
    addHealth(v, t);
    addChecklist(v, t);
}

}  // namespace ampbench::analysis
