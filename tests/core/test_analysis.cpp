// Alignment, noise band, health, gains and verdicts on synthetic runs whose
// answer is known by construction.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <random>
#include <set>

#include "core/analysis/AnalysisJson.h"
#include "core/analysis/CapacityChart.h"
#include "core/analysis/ComparisonTable.h"
#include "core/analysis/ExperimentAnalysis.h"
#include "core/analysis/StudentT.h"
#include "core/analysis/Verdict.h"
#include "core/config/Presets.h"
#include "tests/core/AnalysisFixtures.h"

using namespace ampbench::analysis::fixtures;

using namespace ampbench;
using namespace ampbench::analysis;

namespace {

/// Baseline fp32 with `seeds` seeds plus one candidate arm on the same seeds.
ExperimentData experiment(int seeds, RunShape candidate) {
    ExperimentData d;
    d.experiment.id = 1;
    d.experiment.name = "synthetic";
    int64_t id = 1;
    const double accuracies[] = {0.845, 0.850, 0.855};
    for (int s = 1; s <= seeds; ++s) {
        RunShape b;
        b.seed = static_cast<uint64_t>(s);
        b.accuracy = accuracies[(s - 1) % 3];
        d.runs.push_back(makeRun(id++, b));
    }
    for (int s = 1; s <= seeds; ++s) {
        RunShape c = candidate;
        c.seed = static_cast<uint64_t>(s);
        c.accuracy += accuracies[(s - 1) % 3] - 0.85;
        d.runs.push_back(makeRun(id++, c));
    }
    return d;
}

RunShape ampArm() {
    RunShape c;
    c.arm = "amp";
    c.precision = "amp-bf16";
    c.ms_per_sample = 0.5;
    return c;
}

bool anyContains(const std::vector<std::string>& lines, const std::string& needle) {
    for (const auto& l : lines) {
        if (l.find(needle) != std::string::npos) {
            return true;
        }
    }
    return false;
}

/// Findings are data; their words come from the one renderer.
bool anyContains(const std::vector<analysis::Finding>& findings, const std::string& needle) {
    return anyContains(analysis::describeAll(findings), needle);
}

bool hasCode(const std::vector<analysis::Finding>& findings, analysis::FindingCode code) {
    return std::any_of(findings.begin(), findings.end(),
                       [code](const analysis::Finding& f) { return f.code == code; });
}

}  // namespace

// --- the t distribution ---

TEST(StudentT, IncompleteBetaMatchesClosedForms) {
    EXPECT_NEAR(incompleteBeta(1, 1, 0.3), 0.3, 1e-12);
    EXPECT_NEAR(incompleteBeta(2, 3, 0.4), 0.5248, 1e-10);  // binomial sum
    EXPECT_NEAR(incompleteBeta(2, 3, 0.9), 1 - incompleteBeta(3, 2, 0.1), 1e-12);
    EXPECT_EQ(incompleteBeta(2, 3, 0), 0);
    EXPECT_EQ(incompleteBeta(2, 3, 1), 1);
}

TEST(StudentT, CdfMatchesKnownValues) {
    EXPECT_NEAR(studentTCdf(1.0, 1), 0.75, 1e-10);  // Cauchy
    EXPECT_NEAR(studentTCdf(1.0, 2), 0.5 + 1.0 / (2 * std::sqrt(3.0)), 1e-10);
    EXPECT_NEAR(studentTCdf(2.228, 10), 0.97499, 1e-4);   // the textbook critical value
    EXPECT_NEAR(studentTCdf(-1.5, 3.7), 0.106799, 1e-5);  // fractional df
    EXPECT_NEAR(studentTCdf(0, 5), 0.5, 1e-12);
    EXPECT_NEAR(studentTCdf(1.96, 1e7), 0.975, 1e-4);  // tends to the normal
}

TEST(StudentT, WelchTest) {
    auto r = welchTest({1, 2, 3, 4, 5}, {2, 4, 6, 8, 10});
    ASSERT_TRUE(r.valid);
    EXPECT_NEAR(r.delta, 3, 1e-12);
    EXPECT_NEAR(r.t, 1.897367, 1e-5);
    EXPECT_NEAR(r.df, 5.882353, 1e-5);
    EXPECT_NEAR(r.p, 0.107531, 1e-5);
    EXPECT_FALSE(welchTest({1}, {1, 2}).valid);
    EXPECT_EQ(welchTest({1, 1}, {1, 1}).p, 1);
    EXPECT_EQ(welchTest({1, 1}, {2, 2}).p, 0);
}

// --- curves ---

TEST(Alignment, EmaBySamplesSmoothsAlikeWhateverTheStepSize) {
    // A step change at 1000 samples seen by two arms with 4x different samples per step.
    std::vector<double> x1, y1, x4, y4;
    for (int i = 1; i <= 80; ++i) {
        x1.push_back(i * 25.0);
        y1.push_back(i * 25 <= 1000 ? 1.0 : 0.0);
    }
    for (int i = 1; i <= 20; ++i) {
        x4.push_back(i * 100.0);
        y4.push_back(i * 100 <= 1000 ? 1.0 : 0.0);
    }
    auto s1 = emaBySamples(x1, y1, 200), s4 = emaBySamples(x4, y4, 200);
    // Same x (1400 samples): both decayed by exp(-400/200).
    EXPECT_NEAR(s1[55], std::exp(-2.0), 0.02);
    EXPECT_NEAR(s4[13], std::exp(-2.0), 0.02);
}

TEST(Alignment, NoiseBandFromSeeds) {
    auto d = experiment(3, ampArm());
    auto a = analyzeExperiment(d);
    ASSERT_EQ(a.band.seeds, 3);
    ASSERT_EQ(a.band.x.size(), 100u);
    // σ of the seeds' offsets is 0.02; smoothing keeps some step noise on top.
    const size_t mid = 50;
    EXPECT_NEAR(a.band.sd[mid], 0.02, 0.008);
    EXPECT_NEAR(a.band.high[mid] - a.band.low[mid], 4 * a.band.sd[mid], 1e-12);
    EXPECT_LE(a.band.min[mid], a.band.mean[mid]);
    EXPECT_GE(a.band.max[mid], a.band.mean[mid]);
}

// --- verdicts ---

TEST(Verdict, IdenticalCurvesAreAligned) {
    RunShape same;  // the baseline's own shape under another arm name
    same.arm = "amp";
    same.precision = "amp-bf16";
    auto a = analyzeExperiment(experiment(3, same));
    const auto& v = verdictOf(a, "amp");
    EXPECT_EQ(v.verdict, Verdict::Aligned) << v.summary;
    EXPECT_TRUE(v.noise_known);
    EXPECT_LT(v.curve.tail_mean_abs, 0.1);
    EXPECT_GT(v.curve.trend_r, 0.9);
    EXPECT_EQ(verdictOf(a, "fp32").verdict, Verdict::Baseline);
}

TEST(Verdict, CurveShiftedWellBeyondTheBandDiverged) {
    RunShape c = ampArm();
    c.shift = 0.3;  // about 7 band half-widths
    c.accuracy = 0.80;
    auto a = analyzeExperiment(experiment(3, c));
    const auto& v = verdictOf(a, "amp");
    EXPECT_EQ(v.verdict, Verdict::Diverged) << v.summary;
    EXPECT_GT(v.curve.tail_mean_abs, 2);
    EXPECT_GT(v.curve.tail_signed, 0);
    EXPECT_TRUE(v.final_gap.significant);
    EXPECT_TRUE(v.final_gap.welch.valid);
    EXPECT_LT(v.final_gap.welch.p, 0.05);
    EXPECT_TRUE(anyContains(v.next_checks, "Norm layers")) << "an AMP arm that diverged";
}

// A seed's worth of difference: with a validation metric inside the tolerance the
// arm is aligned (what an A/A arm shows); judged on the curve alone, within noise.
TEST(Verdict, SeedNoiseSizedDifferenceIsAlignedOrWithinNoise) {
    RunShape c = ampArm();
    c.shift = 0.03;  // 1.5σ of the seed offsets: a seed's worth of difference
    c.accuracy = 0.847;
    auto d = experiment(3, c);
    auto a = analyzeExperiment(d);
    const auto& v = verdictOf(a, "amp");
    EXPECT_EQ(v.verdict, Verdict::Aligned) << v.summary;
    EXPECT_EQ(v.summary.code, FindingCode::AlignedWithBaseline);
    EXPECT_GT(v.curve.tail_mean_abs, 0.5);
    EXPECT_LE(v.curve.tail_mean_abs, 1.0);
    EXPECT_FALSE(v.final_gap.significant);

    for (auto& r : d.runs) {
        r.evals.clear();  // no validation metric: the curve decides
    }
    auto curve_only = analyzeExperiment(d);
    EXPECT_EQ(verdictOf(curve_only, "amp").verdict, Verdict::WithinNoise)
        << verdictOf(curve_only, "amp").summary;
}

// A training loss that sits outside the band while the final metric agrees: the
// arm trains the same (a different lr or batch keeps the training loss apart).
TEST(Verdict, ACurveOffsetWithTheSameFinalMetricIsAligned) {
    RunShape c = ampArm();
    c.shift = 0.06;  // 3σ: about 1.5 band half-widths
    auto a = analyzeExperiment(experiment(3, c));
    const auto& v = verdictOf(a, "amp");
    EXPECT_EQ(v.verdict, Verdict::Aligned) << v.summary;
    EXPECT_EQ(v.summary.code, FindingCode::AlignedCurveOffset);
    EXPECT_NE(describe(v.summary).find("aligned (curve offset)"), std::string::npos);
    EXPECT_GT(v.curve.tail_mean_abs, 1.0);
    EXPECT_LE(v.curve.tail_mean_abs, 2.0);
    EXPECT_TRUE(anyContains(v.reasons, "tolerance 1.00 points")) << "2σ of 0.5 points";
}

// A gap beyond the tolerance that the seeds cannot tell from noise.
TEST(Verdict, AGapTheSeedsCannotResolveIsInconclusiveAndSaysHowManySeeds) {
    auto d = experiment(3, ampArm());
    const double wide[] = {0.80, 0.84, 0.86};  // mean 83.3%: 1.7 points below, σ 3.1 points
    int k = 0;
    for (auto& r : d.runs) {
        if (r.row.arm == "amp") {
            r.evals.back().val_accuracy = wide[k++];
        }
    }
    auto a = analyzeExperiment(d);
    const auto& v = verdictOf(a, "amp");
    EXPECT_EQ(v.verdict, Verdict::Inconclusive) << v.summary;
    ASSERT_EQ(v.summary.code, FindingCode::FinalUnresolved);
    EXPECT_GT(v.summary.value(analysis::FindingKey::SeedsNeeded), 3);
    EXPECT_NE(describe(v.summary).find("seeds per arm would resolve it"), std::string::npos);
}

// A margin the user sets widens the tolerance beyond 2σ.
TEST(Verdict, TheSpecsMarginWidensTheTolerance) {
    auto d = experiment(3, ampArm());
    const double lower[] = {0.825, 0.83, 0.835};  // 2 points below: significant
    int k = 0;
    for (auto& r : d.runs) {
        if (r.row.arm == "amp") {
            r.evals.back().val_accuracy = lower[k++];
        }
    }
    EXPECT_EQ(verdictOf(analyzeExperiment(d), "amp").verdict, Verdict::Diverged);
    d.spec_ok = true;
    d.spec.arms = {{"fp32", config::Precision::Fp32}, {"amp", config::Precision::AmpBf16}};
    d.spec.tolerance_margin = 0.03;
    const auto a = analyzeExperiment(d);
    const auto& v = verdictOf(a, "amp");
    EXPECT_NE(v.verdict, Verdict::Diverged) << v.summary;
    EXPECT_TRUE(anyContains(v.reasons, "tolerance 3.00 points"));
}

TEST(Verdict, TooFewOptimizerStepsAreNotJudged) {
    RunShape c = ampArm();
    c.accumulation = 16;  // 25 optimizer steps
    c.shift = 0.5;
    auto a = analyzeExperiment(experiment(1, c));
    const auto& v = verdictOf(a, "amp");
    EXPECT_EQ(v.verdict, Verdict::Inconclusive) << v.summary;
    EXPECT_EQ(v.summary.code, FindingCode::TooFewSteps);
}

// The smoke preset is judged, not "too few optimizer steps": every arm makes the steps
// the verdict needs (K = 4 included), and every arm has two seeds, the baseline's giving
// the noise band.
TEST(Verdict, TheSmokePresetGivesEveryArmWhatAVerdictNeeds) {
    const config::ExperimentSpec smoke = *config::preset("smoke");
    const VerdictThresholds thresholds;
    for (const config::ArmSpec& arm : smoke.arms) {
        EXPECT_GE(static_cast<double>(smoke.micro_steps / arm.accumulation), thresholds.min_steps)
            << arm.name;
        EXPECT_GE(config::seedsForArm(smoke, arm).size(), 2u) << arm.name;
    }
}

// Time to target: the first evaluation at the baseline's final mean accuracy.
TEST(Verdict, TimeToTargetIsTheFirstEvaluationAtTheBaselinesMetric) {
    auto d = experiment(3, ampArm());
    for (auto& r : d.runs) {
        r.evals.back().wall_s = 10.0;
        if (r.row.arm == "amp") {
            run::EvalRecord early = r.evals.back();
            early.step = 200;
            early.samples = 200 * kMicroBatch;
            early.val_accuracy = 0.86;
            early.wall_s = 4.0;
            r.evals.insert(r.evals.begin(), early);
        }
    }
    auto a = analyzeExperiment(d);
    const auto& tt = verdictOf(a, "amp").time_to_target;
    EXPECT_TRUE(tt.accuracy);
    EXPECT_NEAR(tt.target, 0.85, 1e-12);
    EXPECT_EQ(tt.runs, 3);
    EXPECT_EQ(tt.reached, 3);
    EXPECT_DOUBLE_EQ(tt.wall_s, 4.0);
    EXPECT_DOUBLE_EQ(tt.samples, 200.0 * kMicroBatch);
    EXPECT_DOUBLE_EQ(tt.base_wall_s, 10.0) << "the baseline runs at or above their mean";
    const auto j = toJson(a);
    const auto& arm = j["verdicts"][1];
    EXPECT_EQ(arm["code"], "aligned_with_baseline");
    EXPECT_EQ(arm["time_to_target"]["reached"], 3);
    EXPECT_TRUE(anyContains(verdictOf(a, "amp").reasons, "2.50\u00d7 as fast to the target"));
}

// A baseline whose accuracy never rose above its first evaluation (random tokens,
// an accuracy of 0 throughout) sets no target: no "time to 0.00%" line.
TEST(Verdict, ABaselineThatNeverImprovedSetsNoTimeToTarget) {
    auto d = experiment(3, ampArm());
    for (auto& r : d.runs) {
        r.evals.back().val_accuracy = 0.0;
        run::EvalRecord early = r.evals.back();
        early.step = 200;
        early.samples = 200 * kMicroBatch;
        r.evals.insert(r.evals.begin(), early);
    }
    auto a = analyzeExperiment(d);
    const auto& v = verdictOf(a, "amp");
    EXPECT_EQ(v.time_to_target.runs, 0);
    EXPECT_FALSE(anyContains(v.reasons, "time to the baseline"));
    // The same runs with a rising accuracy do get one.
    for (auto& r : d.runs) {
        r.evals.back().val_accuracy = 0.5;
    }
    EXPECT_EQ(verdictOf(analyzeExperiment(d), "amp").time_to_target.runs, 3);
}

// Chance accuracy on synthetic tokens (1 in 32,768), evaluated once at the end: no
// "time to the baseline's final accuracy 0.00%" either, though the single evaluation
// leaves nothing to compare it with.
TEST(Verdict, AChanceAccuracySetsNoTimeToTarget) {
    auto d = experiment(3, ampArm());
    for (auto& r : d.runs) {
        r.evals.back().val_accuracy = 1.0 / 32768;
    }
    auto a = analyzeExperiment(d);
    const auto& v = verdictOf(a, "amp");
    EXPECT_EQ(v.time_to_target.runs, 0);
    EXPECT_FALSE(anyContains(v.reasons, "time to the baseline"));
}

TEST(Verdict, OneSeedLeavesNoiseUnknown) {
    RunShape c = ampArm();
    c.shift = 0.03;
    auto a = analyzeExperiment(experiment(1, c));
    const auto& v = verdictOf(a, "amp");
    EXPECT_FALSE(v.noise_known);
    EXPECT_EQ(a.band.seeds, 1);
    EXPECT_EQ(v.verdict, Verdict::Inconclusive) << v.summary;
    EXPECT_TRUE(anyContains(v.reasons, "noise is unknown"));
    EXPECT_TRUE(anyContains(v.next_checks, "--seeds 1 2 3"));
    EXPECT_TRUE(std::isfinite(v.curve.relative_tail)) << "the relative gap is still reported";
    EXPECT_FALSE(v.final_gap.welch.valid);
}

TEST(Verdict, OneSeedStillCatchesAGrossFailure) {
    RunShape c = ampArm();
    c.shift = 1.2;  // ends far above the baseline: most of its loss drop is lost
    auto a = analyzeExperiment(experiment(1, c));
    EXPECT_EQ(verdictOf(a, "amp").verdict, Verdict::Diverged);
}

TEST(Verdict, AccumulationIsComparedOnSamplesSeen) {
    RunShape c = ampArm();
    c.arm = "amp-accum4";
    c.accumulation = 4;
    auto a = analyzeExperiment(experiment(3, c));
    const auto& v = verdictOf(a, "amp-accum4");
    // Same loss over samples, 4x fewer steps: inside the band.
    EXPECT_TRUE(v.verdict == Verdict::Aligned || v.verdict == Verdict::WithinNoise) << v.summary;
    EXPECT_LT(v.curve.tail_mean_abs, 1.0);
    EXPECT_EQ(v.gains.optimizer_steps, 100);
    EXPECT_EQ(v.facts.accumulation, 4);
}

TEST(Verdict, NonFiniteLossDiverges) {
    RunShape c = ampArm();
    auto d = experiment(3, c);
    auto& run = d.runs.back();
    run.row.status = run::RunStatus::Failed;
    run.row.error = "diverged: the training loss became NaN/inf at step 90";
    run.steps.resize(90);
    run.steps.back().loss = std::nan("");
    run.events.push_back({90, run::EventKind::NonFinite, "training loss is not finite", 0});
    auto a = analyzeExperiment(d);
    const auto& v = verdictOf(a, "amp");
    EXPECT_EQ(v.verdict, Verdict::Diverged);
    EXPECT_EQ(v.health.nonfinite_events, 1);
    EXPECT_EQ(v.health.failures.size(), 1u);
}

TEST(Verdict, ChecklistNamesLrRuleFewUpdatesMissingScalerAndInputBound) {
    RunShape c = ampArm();
    c.arm = "amp-fp16-accum8";
    c.precision = "amp-fp16";  // but loss scale 1 throughout: no scaler
    c.accumulation = 8;
    c.lr_rule = "none";
    auto d = experiment(3, c);
    for (auto& r : d.runs) {
        if (r.row.arm == c.arm) {
            for (auto& s : r.steps) {
                s.data_wait_ms = 0.5 * s.step_ms;
            }
        }
    }
    auto a = analyzeExperiment(d);
    const auto& v = verdictOf(a, c.arm);
    EXPECT_TRUE(anyContains(v.next_checks, "LR not rescaled"))
        << ::testing::PrintToString(analysis::describeAll(v.next_checks));
    EXPECT_TRUE(anyContains(v.next_checks, "Too few optimizer updates"));
    EXPECT_TRUE(anyContains(v.next_checks, "Scaler missing"));
    EXPECT_TRUE(hasCode(v.next_checks, analysis::FindingCode::ScalerMissing));
    EXPECT_TRUE(hasCode(v.next_checks, analysis::FindingCode::LrNotRescaled));
    EXPECT_TRUE(anyContains(v.next_checks, "Input-bound"));
    EXPECT_TRUE(v.health.input_bound);
    EXPECT_NEAR(v.health.data_wait_share, 0.5, 1e-9);
}

// The baseline's settings again under another name (an A/A arm): its verdict checks
// the verdict, its speed-up is the machine's timing noise, not a gain.
TEST(Verdict, AnAaArmIsNamedAndItsSpeedupReadAsTimingNoise) {
    RunShape again;
    again.arm = "fp32-again";
    auto a = analyzeExperiment(experiment(3, again));
    const auto& v = verdictOf(a, "fp32-again");
    EXPECT_TRUE(v.facts.aa_copy);
    EXPECT_EQ(v.verdict, Verdict::Aligned) << v.summary;
    EXPECT_TRUE(hasCode(v.reasons, FindingCode::AaCheck));
    EXPECT_FALSE(hasCode(v.reasons, FindingCode::Gains)) << "noise is not a gain";
    EXPECT_FALSE(hasCode(v.next_checks, FindingCode::AaTimingDrift))
        << ::testing::PrintToString(describeAll(v.next_checks));
    EXPECT_TRUE(anyContains(v.reasons, "A/A check: this arm is fp32 again"));

    // Identical settings that ran 25% faster: the machine's speed drifted.
    again.ms_per_sample = 0.8;
    auto drift = analyzeExperiment(experiment(3, again));
    const auto& d = verdictOf(drift, "fp32-again");
    EXPECT_TRUE(hasCode(d.next_checks, FindingCode::AaTimingDrift))
        << ::testing::PrintToString(describeAll(d.next_checks));

    // An A/A arm called diverged is a false alarm, and says so.
    again.ms_per_sample = 1;
    again.shift = 0.3;
    again.accuracy = 0.80;
    auto alarm = analyzeExperiment(experiment(3, again));
    const auto& f = verdictOf(alarm, "fp32-again");
    EXPECT_EQ(f.verdict, Verdict::Diverged);
    EXPECT_TRUE(hasCode(f.next_checks, FindingCode::AaFalseAlarm));

    // Another precision is no A/A arm, nor is another accumulation.
    EXPECT_FALSE(verdictOf(analyzeExperiment(experiment(3, ampArm())), "amp").facts.aa_copy);
    RunShape accum;
    accum.arm = "fp32-accum2";
    accum.accumulation = 2;
    EXPECT_FALSE(verdictOf(analyzeExperiment(experiment(3, accum)), accum.arm).facts.aa_copy);
}

// The validation metric as mean ± sd per arm, over the evaluations all its runs made.
TEST(ExperimentAnalysis, ValidationMetricAsMeanAndSdPerArm) {
    auto d = experiment(3, ampArm());
    // A second evaluation halfway, made by every run but one of the amp arm's.
    for (auto& r : d.runs) {
        if (r.row.arm == "amp" && r.row.seed == 3) {
            continue;
        }
        run::EvalRecord half = r.evals.back();
        half.samples /= 2;
        half.val_accuracy -= 0.1;
        r.evals.insert(r.evals.begin(), half);
    }
    const auto a = analyzeExperiment(d);
    EXPECT_EQ(a.validation_metric, "val_accuracy");
    ASSERT_EQ(a.validation.size(), 2u);
    const auto& base = a.validation[0];
    EXPECT_EQ(base.arm, "fp32");
    EXPECT_EQ(base.runs, 3);
    ASSERT_EQ(base.x.size(), 2u);
    EXPECT_DOUBLE_EQ(base.x[1], static_cast<double>(kMicroBatch * kMicroBatches));
    EXPECT_NEAR(base.mean[1], 0.85, 1e-12);
    EXPECT_NEAR(base.sd[1], 0.005, 1e-12);
    EXPECT_NEAR(base.mean[0], 0.75, 1e-12);
    const auto& amp = a.validation[1];
    ASSERT_EQ(amp.x.size(), 1u) << "the halfway evaluation is missing from one amp run";
    const auto j = toJson(a);
    EXPECT_EQ(j["validation"]["metric"], "val_accuracy");
    EXPECT_EQ(j["validation"]["arms"].size(), 2u);
}

// Without deterministic mode the analysis says a run would not repeat bit for bit.
TEST(ExperimentAnalysis, SaysWhetherRunsAreBitReproducible) {
    auto d = experiment(2, ampArm());
    d.spec_ok = true;
    d.spec.arms = {{"fp32", config::Precision::Fp32}, {"amp", config::Precision::AmpBf16}};
    auto loose = analyzeExperiment(d);
    EXPECT_NE(loose.reproducibility.find("not bit-reproducible"), std::string::npos);
    EXPECT_EQ(toJson(loose)["bit_reproducible"], false);
    d.spec.deterministic = true;
    auto exact = analyzeExperiment(d);
    EXPECT_TRUE(exact.reproducibility.empty());
    EXPECT_EQ(toJson(exact)["bit_reproducible"], true);
}

TEST(Verdict, NegativeControlsSayWhatTheyShow) {
    RunShape pure = ampArm();
    pure.arm = "pure-fp16";
    pure.precision = "pure-fp16";
    const auto pure_analysis = analyzeExperiment(experiment(3, pure));
    const auto& p = verdictOf(pure_analysis, "pure-fp16");
    EXPECT_TRUE(hasCode(p.next_checks, FindingCode::PureFp16Control))
        << ::testing::PrintToString(describeAll(p.next_checks));

    RunShape noscale = ampArm();
    noscale.arm = "amp-noscale";
    noscale.precision = "amp-fp16";
    noscale.loss_scaling = false;
    const auto noscale_analysis = analyzeExperiment(experiment(3, noscale));
    const auto& n = verdictOf(noscale_analysis, "amp-noscale");
    EXPECT_TRUE(hasCode(n.next_checks, FindingCode::NoScaleControl));
    EXPECT_FALSE(hasCode(n.next_checks, FindingCode::ScalerMissing))
        << "no scaler was asked for: the control, not a missing scaler";
}

TEST(Health, SkippedStepsAndCollapsingScale) {
    RunShape c = ampArm();
    c.precision = "amp-fp16";
    c.loss_scale = 65536;
    auto d = experiment(3, c);
    auto& run = d.runs.back();
    // Two calibration skips at the start, then a streak of 7 from step 200 with the scale halving.
    for (int64_t step : {1, 2}) {
        run.steps[step - 1].skipped = true;
    }
    double scale = 65536;
    for (int64_t step = 200; step < 207; ++step) {
        run.steps[step - 1].skipped = true;
        scale /= 64;
        run.steps[step - 1].loss_scale = scale;
    }
    auto a = analyzeExperiment(d);
    const auto& h = verdictOf(a, "amp").health;
    EXPECT_EQ(h.skipped, 9);
    EXPECT_EQ(h.early_skipped, 2);
    EXPECT_EQ(h.longest_skip_run, 7);
    EXPECT_EQ(h.longest_skip_start, 200);
    EXPECT_LT(h.min_loss_scale, 1.0);
    EXPECT_NE(h.skipped_where.find("1\xE2\x80\x93"
                                   "2"),
              std::string::npos)
        << h.skipped_where;
    EXPECT_NE(h.skipped_where.find("200\xE2\x80\x93"
                                   "206"),
              std::string::npos)
        << h.skipped_where;
    EXPECT_TRUE(anyContains(verdictOf(a, "amp").next_checks, "Loss scale collapsing"));
}

TEST(Health, DescribeStepsFoldsRanges) {
    EXPECT_EQ(describeSteps({1, 2, 3, 7, 9, 10}),
              "1\xE2\x80\x93"
              "3, 7, 9\xE2\x80\x93"
              "10");
    EXPECT_EQ(describeSteps({}), "");
}

// --- gains ---

TEST(Gains, SpeedupWithInterval) {
    auto a = analyzeExperiment(experiment(3, ampArm()));  // half the time per sample
    const auto& g = verdictOf(a, "amp").gains;
    EXPECT_NEAR(g.speedup, 2.0, 0.05);
    EXPECT_LE(g.speedup_ci.low, g.speedup);
    EXPECT_GE(g.speedup_ci.high, g.speedup);
    EXPECT_LT(g.speedup_ci.high - g.speedup_ci.low, 0.2);
    EXPECT_NEAR(g.throughput_ratio, 2.0, 0.05);
    EXPECT_NEAR(g.memory_ratio, 1.0, 1e-12);
    EXPECT_TRUE(
        anyContains(verdictOf(a, "amp").reasons, "in time per sample against fp32 (95% CI"));
    // Slower AMP gets a check that names the device's usual cause.
    RunShape slow = ampArm();
    slow.ms_per_sample = 2.0;
    auto s = analyzeExperiment(experiment(3, slow));
    EXPECT_NEAR(verdictOf(s, "amp").gains.speedup, 0.5, 0.02);
    EXPECT_TRUE(anyContains(verdictOf(s, "amp").next_checks, "No speed-up"));
    EXPECT_TRUE(anyContains(verdictOf(s, "amp").next_checks, "On CPU"));
    // Deterministic: the same data gives the same interval.
    auto again = analyzeExperiment(experiment(3, ampArm()));
    EXPECT_EQ(verdictOf(again, "amp").gains.speedup_ci.low, g.speedup_ci.low);
}

TEST(Gains, MaxBatchRatioWhenBothArmsWereSearched) {
    auto d = experiment(1, ampArm());
    store::BatchSearchRow base, amp, old;
    base.arm = "fp32";
    base.status = "finished";
    base.max_batch = 512;
    old.arm = "amp";
    old.status = "finished";
    old.max_batch = 640;  // an earlier search; the latest counts
    amp.arm = "amp";
    amp.status = "finished";
    amp.max_batch = 1024;
    d.batch_searches = {base, old, amp};
    auto a = analyzeExperiment(d);
    EXPECT_EQ(verdictOf(a, "amp").gains.max_batch, 1024);
    EXPECT_NEAR(verdictOf(a, "amp").gains.max_batch_ratio, 2.0, 1e-12);
    auto none = analyzeExperiment(experiment(1, ampArm()));
    EXPECT_EQ(verdictOf(none, "amp").gains.max_batch, 0);
    EXPECT_TRUE(std::isnan(verdictOf(none, "amp").gains.max_batch_ratio));
}

// --- incomplete runs, JSON ---

TEST(ExperimentAnalysis, IncompleteRunsAreNamedAndLeftOut) {
    auto d = experiment(3, ampArm());
    d.runs[4].row.status = run::RunStatus::Interrupted;
    d.runs[4].steps.resize(20);
    d.runs[4].row.last_step = 20;
    auto a = analyzeExperiment(d);
    ASSERT_EQ(a.incomplete.size(), 1u);
    EXPECT_EQ(a.incomplete[0].describe(), "run 5 (amp, seed 2): interrupted at step 20 of 400");
    EXPECT_EQ(verdictOf(a, "amp").runs_used, 2);
    EXPECT_EQ(a.runs.size(), 5u);
}

TEST(ExperimentAnalysis, JsonCarriesVerdictsAndNullsForUnknowns) {
    auto a = analyzeExperiment(experiment(1, ampArm()));
    auto j = toJson(a);
    auto round = nlohmann::json::parse(j.dump());
    ASSERT_EQ(round["verdicts"].size(), 2u);
    EXPECT_EQ(round["verdicts"][0]["verdict"], "baseline");
    EXPECT_EQ(round["verdicts"][1]["verdict"], "inconclusive");
    EXPECT_TRUE(round["verdicts"][1]["final_gap"]["welch"].is_null());
    EXPECT_TRUE(round["verdicts"][1]["curve"]["tail_mean_band_units"].is_null());
    EXPECT_EQ(round["summary"]["arms"].size(), 2u);
    EXPECT_EQ(round["noise_band"]["seeds"], 1);
}

TEST(Verdict, SuggestsChannelsLastForConvolutionalAmpOnCuda) {
    auto make = [](const std::string& model, const std::string& device, bool channels_last) {
        auto d = experiment(2, ampArm());
        d.experiment.spec_json = nlohmann::json{{"model", {{"name", model}}}}.dump();
        for (auto& r : d.runs) {
            r.row.env_json = R"({"device":")" + device + R"(","device_name":"test"})";
            auto arm = nlohmann::json::parse(r.row.spec_json);
            arm["channels_last"] = channels_last && r.row.arm == "amp";
            r.row.spec_json = arm.dump();
        }
        return analyzeExperiment(d);
    };
    const auto hinted = make("resnet", "cuda:0", false);
    EXPECT_TRUE(anyContains(verdictOf(hinted, "amp").next_checks, "channels_last"));
    EXPECT_FALSE(anyContains(verdictOf(hinted, "fp32").next_checks, "channels_last"));
    EXPECT_FALSE(
        anyContains(verdictOf(make("resnet", "cuda:0", true), "amp").next_checks, "channels_last"));
    EXPECT_FALSE(anyContains(verdictOf(make("transformer", "cuda:0", false), "amp").next_checks,
                             "channels"));
    EXPECT_FALSE(anyContains(verdictOf(make("cnn", "cpu", false), "amp").next_checks, "channels"));
    EXPECT_TRUE(anyContains(verdictOf(make("cnn", "cuda:0", false), "amp").next_checks, "NHWC"));
}

// One speed-up everywhere: the summary table's equals the verdict's; with two or more
// runs per arm its interval is across runs, with one it is within the run.
TEST(Gains, OneSpeedupDefinitionAndARunLevelInterval) {
    RunShape fast = ampArm();
    fast.ms_per_sample = 0.5;
    auto a = analyzeExperiment(experiment(3, fast));
    const auto& g = verdictOf(a, "amp").gains;
    EXPECT_NEAR(g.speedup, 2.0, 0.05);
    EXPECT_TRUE(g.ci_across_runs);
    EXPECT_LT(g.speedup_ci.low, g.speedup);
    EXPECT_GT(g.speedup_ci.high, g.speedup);
    for (const auto& s : a.arms) {
        if (s.arm == "amp") {
            EXPECT_DOUBLE_EQ(s.speedup, g.speedup) << "the table and the verdict agree";
        }
    }
    EXPECT_TRUE(anyContains(verdictOf(a, "amp").reasons, "across runs"));
    auto one = analyzeExperiment(experiment(1, fast));
    EXPECT_FALSE(verdictOf(one, "amp").gains.ci_across_runs);
    EXPECT_TRUE(anyContains(verdictOf(one, "amp").reasons, "within one run"));
}

// A CPU run's memory is its own tensors' since runs say so ("memory": "tensors"); an
// older run, or a training script, measured its process's resident set, the program
// included: the verdict says so beside the ratio, and the column names what it shows.
TEST(Gains, AMemoryRatioOfProcessesSaysSo) {
    auto measured = [](const char* memory) {
        auto d = experiment(2, ampArm());
        for (auto& r : d.runs) {
            r.row.env_json = std::string(R"({"device":"cpu","device_name":"test")") +
                             (*memory ? std::string(R"(,"memory":")") + memory + "\"" : "") + "}";
        }
        return analyzeExperiment(d);
    };
    const auto own = measured("tensors");
    EXPECT_EQ(own.memory_label, "peak in tensors");
    EXPECT_FALSE(verdictOf(own, "amp").gains.process_memory);
    EXPECT_TRUE(anyContains(verdictOf(own, "amp").reasons, "peak memory 1.00"));
    EXPECT_FALSE(anyContains(verdictOf(own, "amp").reasons, "resident set"));
    for (const char* memory : {"", "resident"}) {
        const auto process = measured(memory);
        EXPECT_EQ(process.memory_label, "peak RSS");
        EXPECT_TRUE(verdictOf(process, "amp").gains.process_memory);
        EXPECT_TRUE(anyContains(verdictOf(process, "amp").reasons, "whole process's resident set"))
            << memory;
        EXPECT_EQ(toJson(process)["verdicts"][1]["gains"]["process_memory"], true);
    }
    auto mixed = experiment(2, ampArm());
    mixed.runs.front().row.env_json = R"({"device":"cpu","memory":"tensors"})";
    const auto both = analyzeExperiment(mixed);
    EXPECT_EQ(both.memory_label, "peak memory");
    EXPECT_TRUE(std::any_of(both.warnings.begin(), both.warnings.end(), [](const std::string& w) {
        return w.find("measured in different ways") != std::string::npos;
    }));
}

// A verdict waits for the runs it needs, and says which: an arm with a run still to
// train is pending (whatever its finished seeds say), every arm waits for the
// baseline's runs, and an arm whose runs were all cancelled is cancelled.
TEST(Verdict, WaitsForRunsStillToTrainAndNamesCancelledArms) {
    auto with = [](run::RunStatus base2, run::RunStatus amp2) {
        auto d = experiment(2, ampArm());
        d.runs[1].row.status = base2;  // fp32 seed 2
        d.runs[3].row.status = amp2;   // amp seed 2
        return analyzeExperiment(d);
    };
    using S = run::RunStatus;
    const auto ampWaits = with(S::Finished, S::Running);
    EXPECT_EQ(verdictOf(ampWaits, "amp").verdict, Verdict::Pending);
    EXPECT_EQ(describe(verdictOf(ampWaits, "amp").summary),
              "waits for its 1 run still to train (seed 2): 1 finished so far, and the seeds are "
              "judged together");
    EXPECT_EQ(verdictOf(ampWaits, "fp32").verdict, Verdict::Baseline);

    const auto baseWaits = with(S::Running, S::Finished);
    EXPECT_EQ(verdictOf(baseWaits, "amp").verdict, Verdict::Pending);
    EXPECT_TRUE(anyContains({describe(verdictOf(baseWaits, "amp").summary)},
                            "waits for fp32, the baseline: 1 run still to train (seed 2)"));
    const std::string base = describe(verdictOf(baseWaits, "fp32").summary);
    EXPECT_EQ(base.find("one seed"), std::string::npos) << base;
    EXPECT_NE(base.find("still to train"), std::string::npos) << base;
    EXPECT_EQ(toJson(baseWaits)["verdicts"][1]["verdict"], "pending");

    auto cancelled = experiment(2, ampArm());
    cancelled.runs[2].row.status = cancelled.runs[3].row.status = S::Cancelled;
    const auto gone = analyzeExperiment(cancelled);
    EXPECT_EQ(verdictOf(gone, "amp").verdict, Verdict::Cancelled);
    EXPECT_EQ(toString(Verdict::Cancelled), "cancelled");
    // One of two cancelled: the other is judged (and the cancelled one is listed).
    auto half = experiment(2, ampArm());
    half.runs[3].row.status = S::Cancelled;
    const auto judged = analyzeExperiment(half);
    EXPECT_NE(verdictOf(judged, "amp").verdict, Verdict::Cancelled);
    EXPECT_NE(verdictOf(judged, "amp").verdict, Verdict::Pending);
    EXPECT_EQ(judged.incomplete.size(), 1u);
}

TEST(StudentT, QuantileInvertsTheCdf) {
    EXPECT_NEAR(studentTQuantile(0.975, 10), 2.228, 1e-3);
    EXPECT_NEAR(studentTQuantile(0.5, 3), 0.0, 1e-6);  // the CDF is good to about 1e-9
    EXPECT_NEAR(studentTCdf(studentTQuantile(0.9, 4.5), 4.5), 0.9, 1e-9);
}

// The summary table (`show -e`, the GUI's Summary) and the verdict take the same
// runs, the finished ones: a cancelled run moves no figure, the speed-up and the
// memory ratio in the table are the verdict's, and an arm with no finished run
// shows a dash, never "0.00×".
