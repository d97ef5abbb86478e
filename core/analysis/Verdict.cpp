#include "core/analysis/Verdict.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include "core/config/Placement.h"
#include "core/config/PrecisionFormats.h"

namespace ampbench::analysis {
namespace {

using Values = std::map<FindingKey, double>;
using Names = std::map<FindingKey, std::string>;

Finding finding(FindingCode code, Values values = {}, Names names = {}) {
    return Finding{code, std::move(values), std::move(names)};
}

bool isAmp(const ArmFacts& f) {
    return f.precision != config::Precision::Fp32;
}

bool failedNonFinite(const std::vector<Health::Failure>& failures) {
    return std::any_of(failures.begin(), failures.end(), [](const Health::Failure& f) {
        return f.kind == run::FailureKind::NonFinite;
    });
}

/// The final metric of both sides; `judged` adds whether the gap is beyond the seed spread.
std::optional<Finding> finalMetric(const FinalGap& g, const std::string& baseline, bool judged) {
    if (g.arm.empty() || g.base.empty()) {
        return std::nullopt;
    }
    Values v = {{FindingKey::Accuracy, g.metric == "val_accuracy" ? 1.0 : 0.0},
                {FindingKey::ValidationLoss, g.metric == "val_loss" ? 1.0 : 0.0},
                {FindingKey::Arm, g.arm_mean},
                {FindingKey::Base, g.base_mean},
                {FindingKey::Delta, g.delta},
                {FindingKey::BaseSd, g.base_sd},
                {FindingKey::Units, g.units},
                {FindingKey::Judged, judged ? 1.0 : 0.0},
                {FindingKey::Significant, g.significant ? 1.0 : 0.0}};
    if (g.welch.valid) {
        v[FindingKey::WelchP] = g.welch.p;
    }
    return finding(FindingCode::FinalMetric, std::move(v), {{FindingKey::Baseline, baseline}});
}

/// A loss scale that keeps falling: below 1, or steps still skipped after the first ones.
bool scaleCollapsing(const Health& h, const VerdictThresholds& t) {
    const int64_t late_skips = h.skipped - h.early_skipped;
    const double late_share =
        h.steps > 0 ? static_cast<double>(late_skips) / static_cast<double>(h.steps) : 0.0;
    return h.scaler_active && (h.min_loss_scale < 1.0 || late_share > t.skip_share ||
                               (late_skips > 0 && h.longest_skip_run >= 5));
}

/// Where the arm's non-finite steps broke (the locator's events): one finding per
/// place, its first step cited, the three places seen most.
void addOverflowOrigins(ArmVerdict& v) {
    const auto& located = v.health.overflow_origins;
    struct Place {
        const Health::Located* first;
        int count;
    };
    std::vector<Place> places;
    for (const auto& l : located) {
        auto same = [&](const Place& p) {
            return p.first->origin.name == l.origin.name && p.first->origin.where == l.origin.where;
        };
        auto it = std::find_if(places.begin(), places.end(), same);
        if (it == places.end()) {
            places.push_back({&l, 1});
        } else {
            ++it->count;
        }
    }
    std::stable_sort(places.begin(), places.end(),
                     [](const Place& a, const Place& b) { return a.count > b.count; });
    for (size_t i = 0; i < places.size() && i < 3; ++i) {
        const auto& o = places[i].first->origin;
        v.reasons.push_back(finding(FindingCode::OverflowOrigin,
                                    {{FindingKey::Step, static_cast<double>(o.step)},
                                     {FindingKey::LossScale, o.loss_scale},
                                     {FindingKey::Seed, static_cast<double>(places[i].first->seed)},
                                     {FindingKey::Count, static_cast<double>(places[i].count)},
                                     {FindingKey::Located, static_cast<double>(located.size())}},
                                    {{FindingKey::Name, o.name},
                                     {FindingKey::Where, o.where},
                                     {FindingKey::Dtype, o.dtype}}));
    }
}

/// Health findings every arm gets, the baseline included.
void addHealth(ArmVerdict& v, const VerdictThresholds& t) {
    const Health& h = v.health;
    const ArmFacts& f = v.facts;
    for (const auto& failure : h.failures) {
        v.reasons.push_back(finding(
            FindingCode::RunFailed, {{FindingKey::Seed, static_cast<double>(failure.seed)}},
            {{FindingKey::Error, failure.error}, {FindingKey::Kind, run::toString(failure.kind)}}));
    }
    if (h.nonfinite_events > 0) {
        v.reasons.push_back(
            finding(FindingCode::NonFiniteEvents,
                    {{FindingKey::Count, static_cast<double>(h.nonfinite_events)}}));
    }
    const int64_t late_skips = h.skipped - h.early_skipped;
    const double late_share =
        h.steps > 0 ? static_cast<double>(late_skips) / static_cast<double>(h.steps) : 0.0;
    if (h.skipped > 0) {
        v.reasons.push_back(
            finding(FindingCode::SkippedSteps,
                    {{FindingKey::Skipped, static_cast<double>(h.skipped)},
                     {FindingKey::Late, static_cast<double>(late_skips)},
                     {FindingKey::LongestRun, static_cast<double>(h.longest_skip_run)},
                     {FindingKey::LongestStart, static_cast<double>(h.longest_skip_start)}},
                    {{FindingKey::Where, h.skipped_where}}));
    }
    addOverflowOrigins(v);
    if (h.fp8_saturated) {
        const Health::Saturation& first = *h.fp8_saturated;
        v.reasons.push_back(
            finding(FindingCode::Fp8Saturation,
                    {{FindingKey::Step, static_cast<double>(first.step)},
                     {FindingKey::Share, first.share},
                     {FindingKey::Scale, first.scale},
                     {FindingKey::Seed, static_cast<double>(first.seed)},
                     {FindingKey::Saturated, static_cast<double>(h.saturated_casts)},
                     {FindingKey::Recorded, static_cast<double>(h.recorded_casts)}},
                    {{FindingKey::Name, first.name},
                     {FindingKey::Format, first.format},
                     {FindingKey::Recipe, config::toString(f.fp8_recipe)}}));
    }
    if (h.scaler_active && std::isfinite(h.min_loss_scale)) {
        v.reasons.push_back(finding(
            FindingCode::LossScaleRange,
            {{FindingKey::Min, h.min_loss_scale}, {FindingKey::Final, h.final_loss_scale}}));
    }
    if (config::formatOf(f.precision).loss_scaler && f.loss_scaling && !h.scaler_active &&
        h.steps > 0) {
        v.next_checks.push_back(finding(FindingCode::ScalerMissing));
    }
    if (scaleCollapsing(h, t)) {
        v.next_checks.push_back(finding(FindingCode::LossScaleCollapsing,
                                        {{FindingKey::MinScale, h.min_loss_scale},
                                         {FindingKey::LateSkips, double(late_skips)}}));
    }
    if (h.oom_events > 0) {
        v.next_checks.push_back(finding(FindingCode::OutOfMemory));
    }
    if (h.input_bound) {
        v.next_checks.push_back(
            finding(FindingCode::InputBound, {{FindingKey::WaitShare, h.data_wait_share}}));
    }
    if (std::isfinite(h.device_busy_share)) {
        const Values busy = {{FindingKey::Busy, h.device_busy_share},
                             {FindingKey::DeviceMs, h.device_ms},
                             {FindingKey::StepMs, h.busy_step_ms},
                             {FindingKey::Runs, static_cast<double>(h.busy_runs)},
                             {FindingKey::Graph, f.cuda_graph ? 1.0 : 0.0},
                             {FindingKey::EagerPass, h.busy_from_eager_pass ? 1.0 : 0.0},
                             {FindingKey::IsBaseline, v.verdict == Verdict::Baseline ? 1.0 : 0.0}};
        v.reasons.push_back(finding(FindingCode::DeviceBusy, busy));
        if (h.launch_bound) {
            v.next_checks.push_back(finding(FindingCode::LaunchBound, busy));
        }
    }
}

void addTimeToTarget(ArmVerdict& v) {
    const TimeToTarget& tt = v.time_to_target;
    if (!std::isfinite(tt.target) || tt.runs == 0) {
        return;
    }
    v.reasons.push_back(
        finding(FindingCode::TimeToTarget, {{FindingKey::Accuracy, tt.accuracy ? 1.0 : 0.0},
                                            {FindingKey::Target, tt.target},
                                            {FindingKey::Reached, static_cast<double>(tt.reached)},
                                            {FindingKey::Runs, static_cast<double>(tt.runs)},
                                            {FindingKey::WallS, tt.wall_s},
                                            {FindingKey::Samples, tt.samples},
                                            {FindingKey::BaseWallS, tt.base_wall_s},
                                            {FindingKey::BaseSamples, tt.base_samples}}));
}

/// An A/A arm (the baseline again on other seeds): its speed-up is the timing noise
/// and its verdict a false alarm unless aligned or inconclusive.
void addAaCheck(ArmVerdict& v, int baseline_seeds) {
    const Gains& g = v.gains;
    const Names baseline = {{FindingKey::Baseline, v.facts.baseline}};
    v.reasons.push_back(finding(FindingCode::AaCheck,
                                {{FindingKey::Speedup, g.speedup},
                                 {FindingKey::CiLow, g.speedup_ci.low},
                                 {FindingKey::CiHigh, g.speedup_ci.high},
                                 {FindingKey::AcrossRuns, g.ci_across_runs ? 1.0 : 0.0}},
                                baseline));
    if (std::isfinite(g.speedup_ci.low) && std::isfinite(g.speedup_ci.high) &&
        (g.speedup_ci.low > 1.0 || g.speedup_ci.high < 1.0)) {
        v.next_checks.push_back(
            finding(FindingCode::AaTimingDrift, {{FindingKey::Speedup, g.speedup},
                                                 {FindingKey::CiLow, g.speedup_ci.low},
                                                 {FindingKey::CiHigh, g.speedup_ci.high}}));
    }
    if (v.verdict == Verdict::Diverged || v.verdict == Verdict::WithinNoise) {
        Names names = baseline;
        names[FindingKey::Verdict] = toString(v.verdict);
        v.next_checks.push_back(finding(FindingCode::AaFalseAlarm,
                                        {{FindingKey::Seeds, double(baseline_seeds)}}, names));
    }
}

/// What the arm bought, in one line, and a check when AMP made it slower.
void addGains(ArmVerdict& v) {
    const Gains& g = v.gains;
    if (!std::isfinite(g.speedup)) {
        return;
    }
    if (v.facts.aa_copy) {
        return;  // an A/A arm's speed-up is read as noise (addAaCheck)
    }
    v.reasons.push_back(
        finding(FindingCode::Gains,
                {{FindingKey::Speedup, g.speedup},
                 {FindingKey::CiLow, g.speedup_ci.low},
                 {FindingKey::CiHigh, g.speedup_ci.high},
                 {FindingKey::AcrossRuns, g.ci_across_runs ? 1.0 : 0.0},
                 {FindingKey::Memory, g.memory_ratio},
                 {FindingKey::ProcessMemory, g.process_memory ? 1.0 : 0.0},
                 {FindingKey::MaxBatch, g.max_batch_ratio},
                 {FindingKey::EagerSpeedup, g.eager_speedup},
                 {FindingKey::EagerMemory, g.eager_memory_ratio}},
                {{FindingKey::Baseline, v.facts.baseline}, {FindingKey::Timing, g.timing_mode}}));
    const bool cuda = config::onCuda(v.facts.device);
    const bool convolutional = v.facts.model == "cnn" || v.facts.model == "resnet";
    if (isAmp(v.facts) && cuda && convolutional && !v.facts.channels_last) {
        v.next_checks.push_back(finding(FindingCode::TryChannelsLast));
    }
    if (isAmp(v.facts) && g.speedup_ci.high < 1.0) {
        v.next_checks.push_back(
            finding(FindingCode::NoSpeedup, {{FindingKey::Cpu, cuda ? 0.0 : 1.0}}));
    }
}

void addChecklist(ArmVerdict& v, const VerdictThresholds& t) {
    const ArmFacts& f = v.facts;
    const bool judged_bad =
        v.verdict == Verdict::Diverged || (v.verdict == Verdict::Inconclusive && v.noise_known);
    if (f.accumulation > 1 && f.lr_rule == config::LrRule::None &&
        f.effective_batch != f.base_effective_batch) {
        v.next_checks.push_back(finding(FindingCode::LrNotRescaled,
                                        {{FindingKey::K, double(f.accumulation)},
                                         {FindingKey::Batch, double(f.effective_batch)},
                                         {FindingKey::BaseBatch, double(f.base_effective_batch)},
                                         {FindingKey::Lr, f.lr}}));
    }
    if (f.accumulation > 1 && static_cast<double>(v.gains.optimizer_steps) < t.too_few_updates) {
        v.next_checks.push_back(finding(FindingCode::TooFewUpdates,
                                        {{FindingKey::K, double(f.accumulation)},
                                         {FindingKey::Updates, double(v.gains.optimizer_steps)}}));
    }
    if (f.accumulation > 1 && f.lr_rule == config::LrRule::Linear &&
        v.verdict == Verdict::Diverged) {
        v.next_checks.push_back(finding(FindingCode::LinearLrTooLarge,
                                        {{FindingKey::Lr, f.lr}, {FindingKey::BaseLr, f.base_lr}}));
    }
    if (f.precision == config::Precision::PureFp16) {
        v.next_checks.push_back(finding(FindingCode::PureFp16Control));
    } else if (config::formatOf(f.precision).loss_scaler && !f.loss_scaling) {
        v.next_checks.push_back(finding(FindingCode::NoScaleControl));
    } else if (isAmp(f) && judged_bad && f.accumulation == 1) {
        v.next_checks.push_back(finding(FindingCode::NormLayersInFp16));
    }
}

/// The primary judgement, where every run evaluated: the final validation metric
/// against the baseline's, within a tolerance of max(2σ of the baseline's seeds,
/// margin). Worse beyond it and significant: a real loss of quality. Within it: the
/// arm trains the same, and the curve only says how (inside the seed band, or
/// offset from it). Beyond it but not significant: inconclusive, with the seeds that would
/// resolve it. False when there is no validation metric to judge.
bool judgeFinalMetric(ArmVerdict& v, const std::string& base, const VerdictThresholds& t) {
    const FinalGap& g = v.final_gap;
    const CurveDeviation& c = v.curve;
    if (g.metric == "train_loss" || g.arm.empty() || g.base.size() < 2 || !std::isfinite(g.delta) ||
        !std::isfinite(g.base_sd)) {
        return false;
    }
    const bool accuracy = g.metric == "val_accuracy";
    const double floor = accuracy ? 0.001 : 1e-3 * std::fabs(g.base_mean);
    const double tol = std::max({2 * g.base_sd, t.margin, floor});
    const double acc = accuracy ? 1.0 : 0.0;
    v.reasons.push_back(finding(FindingCode::Tolerance, {{FindingKey::Accuracy, acc},
                                                         {FindingKey::Tolerance, tol},
                                                         {FindingKey::BaseSd, g.base_sd},
                                                         {FindingKey::Margin, t.margin}}));
    const double worse = accuracy ? -g.delta : g.delta;  // > 0: the arm lost quality
    const bool significant = g.welch.valid && g.welch.p < 0.05;
    const Names baseline = {{FindingKey::Baseline, base}};
    Values values = {
        {FindingKey::Accuracy, acc}, {FindingKey::Delta, g.delta}, {FindingKey::Tolerance, tol}};
    if (g.welch.valid) {
        values[FindingKey::WelchP] = g.welch.p;
    }
    if (worse > tol && significant) {
        v.verdict = Verdict::Diverged;
        v.summary = finding(FindingCode::FinalWorse, values, baseline);
    } else if (-worse > tol && significant) {
        v.verdict = Verdict::Inconclusive;
        v.summary = finding(FindingCode::FinalBetter, values, baseline);
    } else if (std::fabs(g.delta) > tol) {
        // Seeds per arm for a two-sided 5% test with 80% power at this gap.
        const double s = std::sqrt(
            (g.base_sd * g.base_sd + (std::isfinite(g.arm_sd) ? g.arm_sd * g.arm_sd : 0.0)) / 2.0);
        values[FindingKey::SeedsNeeded] =
            std::max(3.0, std::ceil(15.7 * (s / std::fabs(g.delta)) * (s / std::fabs(g.delta))));
        v.verdict = Verdict::Inconclusive;
        v.summary = finding(FindingCode::FinalUnresolved, values, baseline);
    } else {
        // Within the tolerance the arm trains the same; the curve says only how. A
        // curve inside the seed band is noise between equals (what an A/A arm shows),
        // not a lesser agreement, so it is aligned too.
        const double tail = c.tail_mean_abs;
        v.verdict = Verdict::Aligned;
        if (!std::isfinite(tail) || tail <= t.noise) {
            v.summary = finding(FindingCode::AlignedWithBaseline,
                                {{FindingKey::Tail, std::isfinite(tail) ? tail : 0.0}}, baseline);
        } else {
            values[FindingKey::Tail] = tail;
            values[FindingKey::Above] = c.tail_signed > 0 ? 1.0 : 0.0;
            v.summary = finding(FindingCode::AlignedCurveOffset, values, baseline);
        }
    }
    return true;
}

void decideWithNoise(ArmVerdict& v, int seeds, const std::string& base,
                     const VerdictThresholds& t) {
    const CurveDeviation& c = v.curve;
    const FinalGap& g = v.final_gap;
    const Names baseline = {{FindingKey::Baseline, base}};
    if (std::isfinite(c.tail_mean_abs)) {
        v.reasons.push_back(finding(FindingCode::CurveInBandUnits,
                                    {{FindingKey::Tail, c.tail_mean_abs},
                                     {FindingKey::Above, c.tail_signed > 0 ? 1.0 : 0.0},
                                     {FindingKey::Whole, c.whole_mean_abs},
                                     {FindingKey::OutsideShare, c.outside_share},
                                     {FindingKey::Seeds, double(seeds)}},
                                    baseline));
    }
    if (std::isfinite(c.trend_r)) {
        v.reasons.push_back(finding(FindingCode::TrendAgreement, {{FindingKey::R, c.trend_r}}));
    }
    if (auto fin = finalMetric(g, base, /*judged=*/true)) {
        v.reasons.push_back(*fin);
    }
    const double tail = c.tail_mean_abs;
    if (judgeFinalMetric(v, base, t)) {
        return;
    }
    if (!std::isfinite(tail)) {
        v.verdict = Verdict::Inconclusive;
        v.summary = finding(FindingCode::CurveNotOverlapping);
        return;
    }
    const bool trend_ok = !std::isfinite(c.trend_r) || c.trend_r >= t.trend_r;
    if (tail > t.diverged || (g.significant && tail > t.noise)) {
        v.verdict = Verdict::Diverged;
        v.summary = finding(FindingCode::DivergedFromBand,
                            {{FindingKey::Tail, tail},
                             {FindingKey::Above, c.tail_signed > 0 ? 1.0 : 0.0},
                             {FindingKey::FinalSignificant, g.significant ? 1.0 : 0.0}},
                            baseline);
    } else if (tail <= t.aligned && c.whole_mean_abs <= t.aligned_whole && !g.significant &&
               trend_ok) {
        v.verdict = Verdict::Aligned;
        v.summary = finding(FindingCode::AlignedWithBaseline, {{FindingKey::Tail, tail}}, baseline);
    } else if (tail <= t.noise && !g.significant) {
        v.verdict = Verdict::WithinNoise;
        v.summary = finding(FindingCode::WithinSeedNoise, {{FindingKey::Tail, tail}}, baseline);
    } else {
        v.verdict = Verdict::Inconclusive;
        v.summary = g.significant
                        ? finding(FindingCode::FinalDiffersOnly)
                        : finding(FindingCode::OutsideBandUnclear, {{FindingKey::Tail, tail}});
    }
}

void decideWithoutNoise(ArmVerdict& v, const std::string& base, const VerdictThresholds& t) {
    const CurveDeviation& c = v.curve;
    const Names baseline = {{FindingKey::Baseline, base}};
    v.reasons.push_back(finding(FindingCode::NoiseUnknown, {}, baseline));
    if (std::isfinite(c.relative_tail)) {
        v.reasons.push_back(
            finding(FindingCode::CurveRelative,
                    {{FindingKey::Tail, c.relative_tail}, {FindingKey::Whole, c.relative_whole}}));
    }
    if (std::isfinite(c.trend_r)) {
        v.reasons.push_back(finding(FindingCode::TrendAgreement, {{FindingKey::R, c.trend_r}}));
    }
    if (auto fin = finalMetric(v.final_gap, base, /*judged=*/false)) {
        v.reasons.push_back(*fin);
    }
    if (std::isfinite(c.progress_lost) && std::fabs(c.progress_lost) > t.progress_lost) {
        v.verdict = Verdict::Diverged;
        v.summary = finding(FindingCode::DivergedFromProgress,
                            {{FindingKey::ProgressLost, std::fabs(c.progress_lost)},
                             {FindingKey::Above, c.progress_lost > 0 ? 1.0 : 0.0}},
                            baseline);
        return;
    }
    v.verdict = Verdict::Inconclusive;
    v.summary = finding(FindingCode::NoiseUnknownSummary, {}, baseline);
    v.next_checks.push_back(finding(FindingCode::MeasureTheNoise));
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
        case Verdict::Pending:
            return "pending";
        case Verdict::Cancelled:
            return "cancelled";
    }
    return "inconclusive";
}

void decideVerdict(ArmVerdict& v, int baseline_seeds, const VerdictThresholds& t) {
    v.reasons.clear();
    v.next_checks.clear();
    v.noise_known = baseline_seeds >= 2;
    const Values waiting = {{FindingKey::Runs, double(v.pending)},
                            {FindingKey::Finished, double(v.runs_used)}};
    if (v.verdict == Verdict::Baseline) {
        if (v.pending > 0) {
            v.summary = finding(FindingCode::BaselinePending, waiting,
                                {{FindingKey::Seeds, v.pending_seeds}});
        } else if (v.runs_used == 0 && v.cancelled > 0) {
            v.summary =
                finding(FindingCode::BaselineCancelled, {{FindingKey::Runs, double(v.cancelled)}});
        } else {
            v.summary = baseline_seeds >= 2 ? finding(FindingCode::BaselineWithNoise,
                                                      {{FindingKey::Seeds, double(baseline_seeds)}})
                                            : finding(FindingCode::BaselineWithoutNoise);
        }
        addHealth(v, t);
        return;
    }
    const std::string base = v.facts.baseline.empty() ? "the baseline" : v.facts.baseline;
    // A verdict waits for what it needs: the arm's own runs and the baseline's. What
    // has not ended is pending, what never finished because it was cancelled is
    // cancelled; neither is an inconclusive result.
    if (v.pending > 0) {
        v.verdict = Verdict::Pending;
        v.summary =
            finding(FindingCode::ArmPending, waiting, {{FindingKey::Seeds, v.pending_seeds}});
        return;
    }
    if (v.runs_used == 0 && v.cancelled > 0) {
        v.verdict = Verdict::Cancelled;
        v.summary = finding(FindingCode::ArmCancelled, {{FindingKey::Runs, double(v.cancelled)}});
        return;
    }
    if (v.baseline_pending > 0) {
        v.verdict = Verdict::Pending;
        v.summary = finding(
            FindingCode::WaitingForBaseline, {{FindingKey::Runs, double(v.baseline_pending)}},
            {{FindingKey::Seeds, v.baseline_pending_seeds}, {FindingKey::Baseline, base}});
        return;
    }
    const bool nonfinite = v.health.nonfinite_events > 0 || failedNonFinite(v.health.failures);
    if (v.runs_used == 0 && v.timing_passes > 0) {
        v.verdict = Verdict::Inconclusive;
        v.summary = finding(FindingCode::TimedAloneOnly,
                            {{FindingKey::Passes, static_cast<double>(v.timing_passes)}});
    } else if (v.runs_used == 0) {
        v.verdict = Verdict::Inconclusive;
        v.summary = finding(FindingCode::NoFinishedRun);
    } else if (nonfinite) {
        v.verdict = Verdict::Diverged;
        v.summary = finding(FindingCode::BecameNonFinite);
    } else if (scaleCollapsing(v.health, t)) {
        v.verdict = Verdict::Diverged;
        v.summary = finding(FindingCode::LossScaleCollapsed,
                            {{FindingKey::MinScale, v.health.min_loss_scale},
                             {FindingKey::LateSkips,
                              static_cast<double>(v.health.skipped - v.health.early_skipped)}});
    } else if (v.gains.optimizer_steps > 0 &&
               static_cast<double>(v.gains.optimizer_steps) < t.min_steps) {
        v.verdict = Verdict::Inconclusive;
        v.summary = finding(FindingCode::TooFewSteps,
                            {{FindingKey::Steps, static_cast<double>(v.gains.optimizer_steps)},
                             {FindingKey::Min, t.min_steps}});
    } else if (!std::isfinite(v.curve.relative_whole)) {
        v.verdict = Verdict::Inconclusive;
        v.summary = finding(v.health.failures.empty() ? FindingCode::NoOverlap
                                                      : FindingCode::FailedBeforeCurve);
    } else if (v.noise_known) {
        decideWithNoise(v, baseline_seeds, base, t);
    } else {
        decideWithoutNoise(v, base, t);
    }
    addTimeToTarget(v);
    if (v.facts.aa_copy) {
        addAaCheck(v, baseline_seeds);
    }
    addGains(v);
    addHealth(v, t);
    addChecklist(v, t);
}

}  // namespace ampbench::analysis
