#include "core/analysis/Verdict.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

namespace ampbench::analysis {
namespace {

using Values = std::map<std::string, double>;
using Names = std::map<std::string, std::string>;

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
    Values v = {{"accuracy", g.metric == "val_accuracy" ? 1.0 : 0.0},
                {"validation_loss", g.metric == "val_loss" ? 1.0 : 0.0},
                {"arm", g.arm_mean},
                {"base", g.base_mean},
                {"delta", g.delta},
                {"base_sd", g.base_sd},
                {"units", g.units},
                {"judged", judged ? 1.0 : 0.0},
                {"significant", g.significant ? 1.0 : 0.0}};
    if (g.welch.valid) {
        v["welch_p"] = g.welch.p;
    }
    return finding(FindingCode::FinalMetric, std::move(v), {{"baseline", baseline}});
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
                                    {{"step", static_cast<double>(o.step)},
                                     {"loss_scale", o.loss_scale},
                                     {"seed", static_cast<double>(places[i].first->seed)},
                                     {"count", static_cast<double>(places[i].count)},
                                     {"located", static_cast<double>(located.size())}},
                                    {{"name", o.name}, {"where", o.where}, {"dtype", o.dtype}}));
    }
}

/// Health findings every arm gets, the baseline included.
void addHealth(ArmVerdict& v, const VerdictThresholds& t) {
    const Health& h = v.health;
    const ArmFacts& f = v.facts;
    for (const auto& failure : h.failures) {
        v.reasons.push_back(
            finding(FindingCode::RunFailed, {{"seed", static_cast<double>(failure.seed)}},
                    {{"error", failure.error}, {"kind", run::toString(failure.kind)}}));
    }
    if (h.nonfinite_events > 0) {
        v.reasons.push_back(finding(FindingCode::NonFiniteEvents,
                                    {{"count", static_cast<double>(h.nonfinite_events)}}));
    }
    const int64_t late_skips = h.skipped - h.early_skipped;
    const double late_share =
        h.steps > 0 ? static_cast<double>(late_skips) / static_cast<double>(h.steps) : 0.0;
    if (h.skipped > 0) {
        v.reasons.push_back(finding(FindingCode::SkippedSteps,
                                    {{"skipped", static_cast<double>(h.skipped)},
                                     {"late", static_cast<double>(late_skips)},
                                     {"longest_run", static_cast<double>(h.longest_skip_run)},
                                     {"longest_start", static_cast<double>(h.longest_skip_start)}},
                                    {{"where", h.skipped_where}}));
    }
    addOverflowOrigins(v);
    if (h.fp8_saturated) {
        const Health::Saturation& first = *h.fp8_saturated;
        v.reasons.push_back(finding(FindingCode::Fp8Saturation,
                                    {{"step", static_cast<double>(first.step)},
                                     {"share", first.share},
                                     {"scale", first.scale},
                                     {"seed", static_cast<double>(first.seed)},
                                     {"saturated", static_cast<double>(h.saturated_casts)},
                                     {"recorded", static_cast<double>(h.recorded_casts)}},
                                    {{"name", first.name},
                                     {"format", first.format},
                                     {"recipe", config::toString(f.fp8_recipe)}}));
    }
    if (h.scaler_active && std::isfinite(h.min_loss_scale)) {
        v.reasons.push_back(finding(FindingCode::LossScaleRange,
                                    {{"min", h.min_loss_scale}, {"final", h.final_loss_scale}}));
    }
    if (f.precision == config::Precision::AmpFp16 && f.loss_scaling && !h.scaler_active &&
        h.steps > 0) {
        v.next_checks.push_back(finding(FindingCode::ScalerMissing));
    }
    if (scaleCollapsing(h, t)) {
        v.next_checks.push_back(
            finding(FindingCode::LossScaleCollapsing,
                    {{"min_scale", h.min_loss_scale}, {"late_skips", double(late_skips)}}));
    }
    if (h.oom_events > 0) {
        v.next_checks.push_back(finding(FindingCode::OutOfMemory));
    }
    if (h.input_bound) {
        v.next_checks.push_back(
            finding(FindingCode::InputBound, {{"wait_share", h.data_wait_share}}));
    }
    if (std::isfinite(h.device_busy_share)) {
        const Values busy = {{"busy", h.device_busy_share},
                             {"device_ms", h.device_ms},
                             {"step_ms", h.busy_step_ms},
                             {"runs", static_cast<double>(h.busy_runs)},
                             {"graph", f.cuda_graph ? 1.0 : 0.0},
                             {"eager_pass", h.busy_from_eager_pass ? 1.0 : 0.0},
                             {"is_baseline", v.verdict == Verdict::Baseline ? 1.0 : 0.0}};
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
        finding(FindingCode::TimeToTarget, {{"accuracy", tt.accuracy ? 1.0 : 0.0},
                                            {"target", tt.target},
                                            {"reached", static_cast<double>(tt.reached)},
                                            {"runs", static_cast<double>(tt.runs)},
                                            {"wall_s", tt.wall_s},
                                            {"samples", tt.samples},
                                            {"base_wall_s", tt.base_wall_s},
                                            {"base_samples", tt.base_samples}}));
}

/// An A/A arm (the baseline again on other seeds): its speed-up is the timing noise
/// and its verdict a false alarm unless aligned or inconclusive.
void addAaCheck(ArmVerdict& v, int baseline_seeds) {
    const Gains& g = v.gains;
    const Names baseline = {{"baseline", v.facts.baseline}};
    v.reasons.push_back(finding(FindingCode::AaCheck,
                                {{"speedup", g.speedup},
                                 {"ci_low", g.speedup_ci.low},
                                 {"ci_high", g.speedup_ci.high},
                                 {"across_runs", g.ci_across_runs ? 1.0 : 0.0}},
                                baseline));
    if (std::isfinite(g.speedup_ci.low) && std::isfinite(g.speedup_ci.high) &&
        (g.speedup_ci.low > 1.0 || g.speedup_ci.high < 1.0)) {
        v.next_checks.push_back(
            finding(FindingCode::AaTimingDrift, {{"speedup", g.speedup},
                                                 {"ci_low", g.speedup_ci.low},
                                                 {"ci_high", g.speedup_ci.high}}));
    }
    if (v.verdict == Verdict::Diverged || v.verdict == Verdict::WithinNoise) {
        Names names = baseline;
        names["verdict"] = toString(v.verdict);
        v.next_checks.push_back(
            finding(FindingCode::AaFalseAlarm, {{"seeds", double(baseline_seeds)}}, names));
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
    v.reasons.push_back(finding(FindingCode::Gains,
                                {{"speedup", g.speedup},
                                 {"ci_low", g.speedup_ci.low},
                                 {"ci_high", g.speedup_ci.high},
                                 {"across_runs", g.ci_across_runs ? 1.0 : 0.0},
                                 {"memory", g.memory_ratio},
                                 {"max_batch", g.max_batch_ratio},
                                 {"eager_speedup", g.eager_speedup},
                                 {"eager_memory", g.eager_memory_ratio}},
                                {{"baseline", v.facts.baseline}, {"timing", g.timing_mode}}));
    const bool cuda = v.facts.device.rfind("cuda", 0) == 0;
    const bool convolutional = v.facts.model == "cnn" || v.facts.model == "resnet";
    if (isAmp(v.facts) && cuda && convolutional && !v.facts.channels_last) {
        v.next_checks.push_back(finding(FindingCode::TryChannelsLast));
    }
    if (isAmp(v.facts) && g.speedup_ci.high < 1.0) {
        v.next_checks.push_back(finding(FindingCode::NoSpeedup, {{"cpu", cuda ? 0.0 : 1.0}}));
    }
}

void addChecklist(ArmVerdict& v, const VerdictThresholds& t) {
    const ArmFacts& f = v.facts;
    const bool judged_bad =
        v.verdict == Verdict::Diverged || (v.verdict == Verdict::Inconclusive && v.noise_known);
    if (f.accumulation > 1 && f.lr_rule == config::LrRule::None &&
        f.effective_batch != f.base_effective_batch) {
        v.next_checks.push_back(
            finding(FindingCode::LrNotRescaled, {{"k", double(f.accumulation)},
                                                 {"batch", double(f.effective_batch)},
                                                 {"base_batch", double(f.base_effective_batch)},
                                                 {"lr", f.lr}}));
    }
    if (f.accumulation > 1 && static_cast<double>(v.gains.optimizer_steps) < t.too_few_updates) {
        v.next_checks.push_back(
            finding(FindingCode::TooFewUpdates,
                    {{"k", double(f.accumulation)}, {"updates", double(v.gains.optimizer_steps)}}));
    }
    if (f.accumulation > 1 && f.lr_rule == config::LrRule::Linear &&
        v.verdict == Verdict::Diverged) {
        v.next_checks.push_back(
            finding(FindingCode::LinearLrTooLarge, {{"lr", f.lr}, {"base_lr", f.base_lr}}));
    }
    if (f.precision == config::Precision::PureFp16) {
        v.next_checks.push_back(finding(FindingCode::PureFp16Control));
    } else if (f.precision == config::Precision::AmpFp16 && !f.loss_scaling) {
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
    v.reasons.push_back(finding(
        FindingCode::Tolerance,
        {{"accuracy", acc}, {"tolerance", tol}, {"base_sd", g.base_sd}, {"margin", t.margin}}));
    const double worse = accuracy ? -g.delta : g.delta;  // > 0: the arm lost quality
    const bool significant = g.welch.valid && g.welch.p < 0.05;
    const Names baseline = {{"baseline", base}};
    Values values = {{"accuracy", acc}, {"delta", g.delta}, {"tolerance", tol}};
    if (g.welch.valid) {
        values["welch_p"] = g.welch.p;
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
        values["seeds_needed"] =
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
                                {{"tail", std::isfinite(tail) ? tail : 0.0}}, baseline);
        } else {
            values["tail"] = tail;
            values["above"] = c.tail_signed > 0 ? 1.0 : 0.0;
            v.summary = finding(FindingCode::AlignedCurveOffset, values, baseline);
        }
    }
    return true;
}

void decideWithNoise(ArmVerdict& v, int seeds, const std::string& base,
                     const VerdictThresholds& t) {
    const CurveDeviation& c = v.curve;
    const FinalGap& g = v.final_gap;
    const Names baseline = {{"baseline", base}};
    if (std::isfinite(c.tail_mean_abs)) {
        v.reasons.push_back(finding(FindingCode::CurveInBandUnits,
                                    {{"tail", c.tail_mean_abs},
                                     {"above", c.tail_signed > 0 ? 1.0 : 0.0},
                                     {"whole", c.whole_mean_abs},
                                     {"outside_share", c.outside_share},
                                     {"seeds", double(seeds)}},
                                    baseline));
    }
    if (std::isfinite(c.trend_r)) {
        v.reasons.push_back(finding(FindingCode::TrendAgreement, {{"r", c.trend_r}}));
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
                            {{"tail", tail},
                             {"above", c.tail_signed > 0 ? 1.0 : 0.0},
                             {"final_significant", g.significant ? 1.0 : 0.0}},
                            baseline);
    } else if (tail <= t.aligned && c.whole_mean_abs <= t.aligned_whole && !g.significant &&
               trend_ok) {
        v.verdict = Verdict::Aligned;
        v.summary = finding(FindingCode::AlignedWithBaseline, {{"tail", tail}}, baseline);
    } else if (tail <= t.noise && !g.significant) {
        v.verdict = Verdict::WithinNoise;
        v.summary = finding(FindingCode::WithinSeedNoise, {{"tail", tail}}, baseline);
    } else {
        v.verdict = Verdict::Inconclusive;
        v.summary = g.significant ? finding(FindingCode::FinalDiffersOnly)
                                  : finding(FindingCode::OutsideBandUnclear, {{"tail", tail}});
    }
}

void decideWithoutNoise(ArmVerdict& v, const std::string& base, const VerdictThresholds& t) {
    const CurveDeviation& c = v.curve;
    const Names baseline = {{"baseline", base}};
    v.reasons.push_back(finding(FindingCode::NoiseUnknown, {}, baseline));
    if (std::isfinite(c.relative_tail)) {
        v.reasons.push_back(finding(FindingCode::CurveRelative,
                                    {{"tail", c.relative_tail}, {"whole", c.relative_whole}}));
    }
    if (std::isfinite(c.trend_r)) {
        v.reasons.push_back(finding(FindingCode::TrendAgreement, {{"r", c.trend_r}}));
    }
    if (auto fin = finalMetric(v.final_gap, base, /*judged=*/false)) {
        v.reasons.push_back(*fin);
    }
    if (std::isfinite(c.progress_lost) && std::fabs(c.progress_lost) > t.progress_lost) {
        v.verdict = Verdict::Diverged;
        v.summary = finding(FindingCode::DivergedFromProgress,
                            {{"progress_lost", std::fabs(c.progress_lost)},
                             {"above", c.progress_lost > 0 ? 1.0 : 0.0}},
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
    }
    return "inconclusive";
}

void decideVerdict(ArmVerdict& v, int baseline_seeds, const VerdictThresholds& t) {
    v.reasons.clear();
    v.next_checks.clear();
    v.noise_known = baseline_seeds >= 2;
    if (v.verdict == Verdict::Baseline) {
        v.summary = baseline_seeds >= 2 ? finding(FindingCode::BaselineWithNoise,
                                                  {{"seeds", double(baseline_seeds)}})
                                        : finding(FindingCode::BaselineWithoutNoise);
        addHealth(v, t);
        return;
    }
    const std::string base = v.facts.baseline.empty() ? "the baseline" : v.facts.baseline;
    const bool nonfinite = v.health.nonfinite_events > 0 || failedNonFinite(v.health.failures);
    if (v.runs_used == 0 && v.timing_passes > 0) {
        v.verdict = Verdict::Inconclusive;
        v.summary = finding(FindingCode::TimedAloneOnly,
                            {{"passes", static_cast<double>(v.timing_passes)}});
    } else if (v.runs_used == 0) {
        v.verdict = Verdict::Inconclusive;
        v.summary = finding(FindingCode::NoFinishedRun);
    } else if (nonfinite) {
        v.verdict = Verdict::Diverged;
        v.summary = finding(FindingCode::BecameNonFinite);
    } else if (scaleCollapsing(v.health, t)) {
        v.verdict = Verdict::Diverged;
        v.summary = finding(
            FindingCode::LossScaleCollapsed,
            {{"min_scale", v.health.min_loss_scale},
             {"late_skips", static_cast<double>(v.health.skipped - v.health.early_skipped)}});
    } else if (v.gains.optimizer_steps > 0 &&
               static_cast<double>(v.gains.optimizer_steps) < t.min_steps) {
        v.verdict = Verdict::Inconclusive;
        v.summary = finding(
            FindingCode::TooFewSteps,
            {{"steps", static_cast<double>(v.gains.optimizer_steps)}, {"min", t.min_steps}});
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
