// The advice's decisions on figures given by hand: which settings it times (the candidate
// set), how long its quality check trains, how it ranks what was measured, what it rules
// out and what it recommends, and how it reads an advice's runs back.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "core/analysis/Advice.h"
#include "core/analysis/ExperimentAnalysis.h"
#include "core/config/Advice.h"
#include "core/config/PlannedArm.h"
#include "core/config/Presets.h"
#include "core/config/SpecJson.h"
#include "tests/core/AnalysisFixtures.h"

using namespace ampbench;
using namespace ampbench::analysis;

namespace {

/// What Debian's LibTorch 1.13 on a CPU says of the formats.
config::AdviceDevice cpu113() {
    config::AdviceDevice d;
    d.fp16 = "amp-fp16 autocast is not supported on cpu by this LibTorch";
    d.fp8 = "fp8 needs LibTorch 2.4 or later built with CUDA";
    return d;
}

config::ExperimentSpec cnn(int batch = 64) {
    config::ExperimentSpec s = *config::preset("default");
    s.micro_batch = batch;
    return s;
}

config::FormatCapacity fits(const std::string& format, int64_t safe, bool checkpointing = false) {
    config::FormatCapacity c;
    c.format = format;
    c.safe_batch = safe;
    c.checkpointing = checkpointing;
    return c;
}

std::vector<std::string> names(const std::vector<config::AdviceCandidate>& cs) {
    std::vector<std::string> out;
    for (const auto& c : cs) {
        out.push_back(c.arm.name);
    }
    return out;
}

const config::AdviceCandidate& named(const std::vector<config::AdviceCandidate>& cs,
                                     const std::string& name) {
    for (const auto& c : cs) {
        if (c.arm.name == name) {
            return c;
        }
    }
    throw std::runtime_error("no candidate " + name);
}

CandidateFigures measured(const std::string& arm, double samples_per_s, int64_t peak_mib,
                          int64_t batch = 64) {
    CandidateFigures f;
    f.arm = arm;
    f.format = arm.rfind("amp-bf16", 0) == 0 ? "amp-bf16" : "fp32";
    f.precision = f.format == "amp-bf16" ? config::Precision::AmpBf16 : config::Precision::Fp32;
    f.micro_batch = static_cast<int>(batch);
    f.effective_batch = batch;
    f.lr = 0.05 * static_cast<double>(batch) / 64.0;
    f.measured = true;
    f.samples_per_s = samples_per_s;
    f.peak_bytes = peak_mib << 20;
    return f;
}

CandidateFigures checked(CandidateFigures f, Verdict v, double band = 0.4) {
    f.checked = true;
    f.verdict = v;
    f.noise_known = true;
    f.band_units = band;
    f.steps = 200;
    return f;
}

}  // namespace

TEST(AdviceCandidates, OnLibTorch113CpuFp16AndFp8AreListedWithTheDevicesReasons) {
    const auto formats = config::adviceFormats(cnn(), cpu113());
    std::vector<std::string> got;
    for (const auto& f : formats) {
        got.push_back(f.name);
    }
    EXPECT_EQ(got, (std::vector<std::string>{"fp32", "amp-fp16", "amp-bf16", "fp8"}));
    EXPECT_EQ(formats[1].unsupported, cpu113().fp16);
    EXPECT_FALSE(formats[1].not_for_model);
    EXPECT_TRUE(formats[2].unsupported.empty());
    EXPECT_EQ(formats[3].unsupported, cpu113().fp8);
}

TEST(AdviceCandidates, Tf32OnlyWhereTheGpuHasItAndFp8NotForAModelFile) {
    config::AdviceDevice ampere;
    ampere.cuda = true;
    ampere.tf32 = true;
    EXPECT_EQ(config::adviceFormats(cnn(), ampere)[1].name, "tf32");
    config::AdviceDevice old = ampere;
    old.tf32 = false;
    EXPECT_NE(config::adviceFormats(cnn(), old)[1].name, "tf32");

    config::ExperimentSpec file = cnn();
    file.model.name = "torchscript";
    file.model.file = "model.pt";
    const auto formats = config::adviceFormats(file, ampere);
    const auto& fp8 = formats.back();
    ASSERT_EQ(fp8.name, "fp8");
    EXPECT_TRUE(fp8.not_for_model);
    EXPECT_NE(fp8.unsupported.find("built-in models' Linear layers"), std::string::npos)
        << fp8.unsupported;
    // A format its model cannot take is no candidate at all.
    const auto cs = config::adviceCandidates(file, formats, {}, config::LrRule::Linear);
    EXPECT_EQ(std::count_if(cs.begin(), cs.end(), [](const auto& c) { return c.format == "fp8"; }),
              0);
}

TEST(AdviceCandidates, EachFormatAtTheUsersBatchAndTheLargestThatFitsTheBaselineFirst) {
    const auto cs = config::adviceCandidates(cnn(), config::adviceFormats(cnn(), cpu113()),
                                             {fits("fp32", 517), fits("amp-bf16", 1030)},
                                             config::LrRule::Linear);
    EXPECT_EQ(names(cs), (std::vector<std::string>{"fp32", "fp32-b512", "amp-bf16",
                                                   "amp-bf16-b1024", "amp-fp16", "fp8"}));
    EXPECT_EQ(cs[0].role, config::CandidateRole::Baseline);
    EXPECT_EQ(cs[1].role, config::CandidateRole::LargestBatch);
    EXPECT_EQ(cs[1].arm.micro_batch, 512);  // 517 rounded down to a multiple of 8
    EXPECT_EQ(cs[2].role, config::CandidateRole::UserBatch);
    EXPECT_EQ(cs[2].arm.micro_batch, 0);  // the experiment's
    EXPECT_EQ(cs[4].role, config::CandidateRole::Unsupported);
    EXPECT_EQ(cs[4].unsupported, cpu113().fp16);
    // The learning rate follows the effective batch against the user's by the rule.
    config::ExperimentSpec spec = cnn();
    EXPECT_DOUBLE_EQ(config::scaledLearningRate(spec, cs[1].arm), 0.05 * 8);
    const auto sqrt_cs = config::adviceCandidates(cnn(), config::adviceFormats(cnn(), cpu113()),
                                                  {fits("fp32", 256)}, config::LrRule::Sqrt);
    EXPECT_DOUBLE_EQ(config::scaledLearningRate(spec, named(sqrt_cs, "fp32-b256").arm), 0.05 * 2);
    EXPECT_EQ(config::planArm(spec, cs[3].arm, false).effective_batch, 1024);
}

TEST(AdviceCandidates, ShortOfTheUsersBatchCheckpointingThenAccumulationReachIt) {
    config::ExperimentSpec resnet = cnn(64);
    resnet.model.name = "resnet";
    resnet.model.blocks = {1, 1};
    const auto formats = config::adviceFormats(resnet, cpu113());
    ASSERT_TRUE(config::wantsCheckpointSearch(resnet, formats[0], fits("fp32", 40)));
    const auto cs = config::adviceCandidates(
        resnet, formats, {fits("fp32", 40), fits("fp32", 100, true), fits("amp-bf16", 24)},
        config::LrRule::Linear);
    const auto& ckpt = named(cs, "fp32-ckpt");
    EXPECT_EQ(ckpt.role, config::CandidateRole::Baseline);  // fp32's first: the reference
    EXPECT_TRUE(ckpt.arm.checkpointing);
    EXPECT_EQ(cs.front().arm.name, "fp32-ckpt");
    const auto& accum = named(cs, "fp32-b32x2");
    EXPECT_EQ(accum.role, config::CandidateRole::Accumulation);
    EXPECT_EQ(accum.arm.accumulation, 2);
    // 24 fits: K = 3 micro-batches of 22 reach 66, the least above 64.
    EXPECT_EQ(named(cs, "amp-bf16-b22x3").arm.accumulation, 3);
    // A cnn has no blocks to checkpoint: no such search, accumulation alone.
    EXPECT_FALSE(config::wantsCheckpointSearch(cnn(), config::adviceFormats(cnn(), cpu113())[0],
                                               fits("fp32", 40)));
}

TEST(AdviceCandidates, NothingFitsLeavesOnlyTheFormatsThatCannotRun) {
    const auto cs =
        config::adviceCandidates(cnn(), config::adviceFormats(cnn(), cpu113()),
                                 {fits("fp32", 0), fits("amp-bf16", 0)}, config::LrRule::Linear);
    EXPECT_TRUE(std::all_of(cs.begin(), cs.end(), [](const auto& c) {
        return c.role == config::CandidateRole::Unsupported;
    }));
}

TEST(AdviceCandidates, WithoutASearchEveryFormatTrainsAtTheUsersBatch) {
    config::AdviceDevice any;
    const auto cs = config::adviceCandidates(cnn(), config::adviceFormats(cnn(), any), {},
                                             config::LrRule::Linear);
    EXPECT_EQ(names(cs), (std::vector<std::string>{"fp32", "amp-fp16", "amp-bf16", "fp8"}));
}

TEST(AdviceCandidates, BatchesRoundDownToMultiplesOfEight) {
    EXPECT_EQ(config::roundedBatch(1000), 1000);
    EXPECT_EQ(config::roundedBatch(1003), 1000);
    EXPECT_EQ(config::roundedBatch(17), 16);
    EXPECT_EQ(config::roundedBatch(13), 13);
    EXPECT_EQ(config::roundedBatch(0), 0);
}

TEST(AdviceCandidates, AnArmOfItsOwnBatchTrainsTheSameSamples) {
    config::ExperimentSpec s = cnn(64);
    s.micro_steps = 600;
    config::ArmSpec big;
    big.micro_batch = 512;
    EXPECT_EQ(config::armMicroSteps(s, big), 75);
    big.micro_batch = 500;  // 38,400 samples: 77 micro-batches of 500, the last one whole
    EXPECT_EQ(config::armMicroSteps(s, big), 77);
    EXPECT_EQ(config::armMicroSteps(s, config::ArmSpec{}), 600);
}

TEST(AdviceQuality, AimsForAHundredStepsOfTheLargestBatchWithTheTwoFastest) {
    const std::vector<config::PassFigure> passes = {
        {0, 0.10, 64, true}, {1, 0.08, 512, true}, {2, 0.05, 64, true}, {3, 0.04, 1024, true}};
    const auto q = config::planQuality(passes, 0, 2, 2, 64, 0);
    EXPECT_EQ(q.candidates, (std::vector<int>{0, 3, 2}));
    EXPECT_EQ(q.largest_batch, 1024);
    EXPECT_EQ(q.micro_steps, 100 * 1024 / 64);
}

TEST(AdviceQuality, ACandidateTheBudgetCannotCheckGivesWayToTheNextFastest) {
    // The fastest (batch 512) needs 60 × 512 samples; the next (batch 64) fits.
    const std::vector<config::PassFigure> passes = {
        {0, 1.0, 64, true}, {1, 0.2, 512, true}, {2, 0.5, 64, true}};
    const double budget = 60.0 * 64 * 1.5 * 2 * 1.3 / 1000 * 1.5;
    const auto q = config::planQuality(passes, 0, 2, 2, 64, budget);
    EXPECT_EQ(q.candidates, (std::vector<int>{0, 2}));
    EXPECT_EQ(q.largest_batch, 64);
}

TEST(AdviceQuality, ABudgetTooSmallForTwoChecksOneThenNone) {
    const std::vector<config::PassFigure> passes = {
        {0, 1.0, 64, true}, {1, 0.5, 64, true}, {2, 0.5, 512, true}};
    // Per sample over two seeds: (1 + 0.5 + 0.5) ms × 2 × 1.3 with both, (1 + 0.5) × 2 × 1.3
    // with the one of batch 64 (ties go to the smaller batch), at least 60 × 512 samples
    // with both, 60 × 64 with one.
    const double one = 60.0 * 64 * 1.5 * 2 * 1.3 / 1000;
    auto q = config::planQuality(passes, 0, 2, 2, 64, one * 1.01);
    EXPECT_EQ(q.candidates, (std::vector<int>{0, 1}));
    EXPECT_GE(q.micro_steps, 60);
    q = config::planQuality(passes, 0, 2, 2, 64, one * 0.9);
    EXPECT_TRUE(q.candidates.empty());
    EXPECT_NEAR(q.least_seconds, one, 1e-9);
}

TEST(AdviceQuality, NoCheckWithoutTheBaselinesPassOrAFinishedCandidate) {
    EXPECT_TRUE(config::planQuality({{0, 1.0, 64, false}, {1, 0.5, 64, true}}, 0, 2, 2, 64, 0)
                    .candidates.empty());
    EXPECT_TRUE(config::planQuality({{0, 1.0, 64, true}, {1, 0.5, 64, false}}, 0, 2, 2, 64, 0)
                    .candidates.empty());
}

TEST(AdviceCandidates, APassThatTrainedAnotherBatchIsNamed) {
    EXPECT_EQ(config::batchRefused({64, 64, 64}, 64), "");
    EXPECT_EQ(config::batchRefused({}, 64), "");
    const std::string why = config::batchRefused({32, 32, 64}, 64);
    EXPECT_NE(why.find("trained 32 samples an optimizer step, not the candidate's 64"),
              std::string::npos)
        << why;
    EXPECT_NE(why.find("AMPBENCH_MICRO_BATCH"), std::string::npos);
}

TEST(AdviceDurations, ReadsSecondsMinutesAndHours) {
    EXPECT_EQ(config::parseDuration("90"), 90.0);
    EXPECT_EQ(config::parseDuration("90s"), 90.0);
    EXPECT_EQ(config::parseDuration("5m"), 300.0);
    EXPECT_EQ(config::parseDuration("1h30m"), 5400.0);
    EXPECT_EQ(config::parseDuration("2.5m"), 150.0);
    EXPECT_EQ(config::parseDuration("5min"), 300.0);
    for (const char* bad : {"", "0", "-5m", "5x", "1h30", "m", "nan", "1e400"}) {
        EXPECT_FALSE(config::parseDuration(bad)) << bad;
    }
}

TEST(AdviceRanking, FastestFirstWithRatiosToTheBaseline) {
    const Advice a =
        rankCandidates({checked(measured("fp32", 1000, 400), Verdict::Baseline),
                        checked(measured("amp-bf16-b512", 2300, 192, 512), Verdict::Aligned, 0.4),
                        measured("amp-bf16", 1500, 300)},
                       "fp32", 64);
    ASSERT_EQ(a.rows.size(), 3u);
    EXPECT_EQ(a.rows[0].f.arm, "amp-bf16-b512");
    EXPECT_EQ(a.rows[0].rank, 1);
    EXPECT_NEAR(a.rows[0].speed_ratio, 2.3, 1e-12);
    EXPECT_NEAR(a.rows[0].memory_ratio, 0.48, 1e-12);
    EXPECT_NEAR(a.rows[0].user_step_ms, 1000.0 * 64 / 2300, 1e-9);
    EXPECT_EQ(a.rows[2].f.arm, "fp32");
    EXPECT_NEAR(a.rows[2].speed_ratio, 1.0, 1e-12);
    EXPECT_EQ(a.kind, Recommendation::Candidate);
    EXPECT_EQ(a.recommendation()->f.arm, "amp-bf16-b512");
    const std::string text = recommendationText(a);
    EXPECT_NE(text.find("amp-bf16 at batch 512: 2.30\xC3\x97 fp32's samples/s at 0.48\xC3\x97 its "
                        "memory; curves inside fp32's seed band, 0.4 band widths"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("learning rate 0.4"), std::string::npos) << text;
}

TEST(AdviceRanking, ATieGoesToLessMemoryThenTheSmallerBatch) {
    const Advice a =
        rankCandidates({measured("fp32", 1000, 400), measured("x-big", 2000, 300, 512),
                        measured("x-lean", 1960, 200, 512), measured("x-small", 1970, 300, 128)},
                       "fp32", 64);
    std::vector<std::string> order;
    for (const auto& r : a.rows) {
        order.push_back(r.f.arm);
    }
    // 2000, 1970 and 1960 tie (within 3%): the least memory first, then the smaller batch.
    EXPECT_EQ(order, (std::vector<std::string>{"x-lean", "x-small", "x-big", "fp32"}));
}

TEST(AdviceRanking, ACandidateRuledOutForQualityGivesWayToTheNextThatKeptTheCurve) {
    CandidateFigures diverged =
        checked(measured("amp-bf16-b1024", 3000, 150, 1024), Verdict::Diverged, 3.1);
    diverged.summary.code = FindingCode::FinalWorse;
    const Advice a =
        rankCandidates({checked(measured("fp32", 1000, 400), Verdict::Baseline), diverged,
                        checked(measured("amp-bf16", 1500, 300), Verdict::WithinNoise, 0.7)},
                       "fp32", 64);
    EXPECT_EQ(a.rows.back().f.arm, "amp-bf16-b1024");
    EXPECT_EQ(a.rows.back().status, RowStatus::RuledOut);
    EXPECT_EQ(a.rows.back().why, RuleOut::Diverged);
    EXPECT_EQ(a.rows.back().rank, 0);
    EXPECT_NE(reasonText(a.rows.back(), "fp32").find("diverged from fp32"), std::string::npos);
    EXPECT_EQ(a.recommendation()->f.arm, "amp-bf16");
}

TEST(AdviceRanking, TooManySkippedStepsOrACurveOutsideTheBandRuleOut) {
    CandidateFigures skipping = checked(measured("amp-fp16", 2000, 200), Verdict::Aligned);
    skipping.format = "amp-fp16";
    skipping.skipped = 30;
    skipping.late_skipped = 25;  // of 200: 12.5%
    CandidateFigures outside = checked(measured("amp-bf16", 1800, 200), Verdict::Inconclusive, 1.8);
    const Advice a = rankCandidates(
        {checked(measured("fp32", 1000, 400), Verdict::Baseline), skipping, outside}, "fp32", 64);
    for (const auto& r : a.rows) {
        if (r.f.arm != "fp32") {
            EXPECT_EQ(r.status, RowStatus::RuledOut) << r.f.arm;
        }
    }
    EXPECT_EQ(a.rows[1].why == RuleOut::SkippedSteps || a.rows[2].why == RuleOut::SkippedSteps,
              true);
    EXPECT_EQ(a.kind, Recommendation::KeepBaseline);
    EXPECT_EQ(a.recommendation()->f.arm, "fp32");
    EXPECT_NE(recommendationText(a).find("keep fp32 at batch 64"), std::string::npos);
}

TEST(AdviceRanking, CalibrationSkipsAloneDoNotRuleOut) {
    CandidateFigures fp16 = checked(measured("amp-fp16", 2000, 200), Verdict::Aligned);
    fp16.skipped = 16;  // the scale backing off from 2^16 at the start
    fp16.late_skipped = 0;
    const Advice a =
        rankCandidates({checked(measured("fp32", 1000, 400), Verdict::Baseline), fp16}, "fp32", 64);
    EXPECT_EQ(a.recommendation()->f.arm, "amp-fp16");
}

TEST(AdviceRanking, WithoutAQualityCheckTheFastestIsRecommendedUnchecked) {
    const Advice a = rankCandidates({measured("fp32", 1000, 400), measured("amp-bf16", 1400, 380),
                                     measured("fp32-b512", 1200, 900, 512)},
                                    "fp32", 64);
    EXPECT_EQ(a.kind, Recommendation::Unchecked);
    EXPECT_EQ(a.recommendation()->f.arm, "amp-bf16");
    EXPECT_NE(recommendationText(a).find("not checked"), std::string::npos);
}

TEST(AdviceRanking, LessMemoryAtNoLossOfSpeedIsWorthRecommending) {
    const Advice a = rankCandidates({checked(measured("fp32", 1000, 400), Verdict::Baseline),
                                     checked(measured("amp-bf16", 990, 200), Verdict::Aligned)},
                                    "fp32", 64);
    EXPECT_EQ(a.recommendation()->f.arm, "amp-bf16");
}

TEST(AdviceRanking, UnsupportedAndUnmeasuredComeLastWithTheirReasons) {
    CandidateFigures fp16;
    fp16.arm = "amp-fp16";
    fp16.unsupported = "arm 'amp-fp16': fp16 autocast is not supported on cpu";
    CandidateFigures oom;
    oom.arm = "fp32-b4096";
    oom.failure = "out of memory";
    CandidateFigures cut;
    cut.arm = "amp-bf16-b512";
    const Advice a = rankCandidates({fp16, measured("fp32", 1000, 400), oom, cut}, "fp32", 64);
    std::vector<RowStatus> statuses;
    for (const auto& r : a.rows) {
        statuses.push_back(r.status);
    }
    EXPECT_EQ(statuses, (std::vector<RowStatus>{RowStatus::Ranked, RowStatus::RuledOut,
                                                RowStatus::NotMeasured, RowStatus::Unsupported}));
    EXPECT_EQ(reasonText(a.rows[1], "fp32"), "its pass failed: out of memory");
    EXPECT_EQ(reasonText(a.rows[3], "fp32"), fp16.unsupported);
    EXPECT_EQ(a.kind, Recommendation::KeepBaseline);
    EXPECT_EQ(rankCandidates({fp16}, "fp32", 64).kind, Recommendation::Nothing);
}

TEST(AdviceRanking, TheFrontHoldsWhatNothingElseBeatsOnSpeedAndMemory) {
    CandidateFigures out = measured("fast-but-ruled-out", 9000, 100);
    out.failure = "out of memory";
    out.measured = false;
    const Advice a = rankCandidates(
        {measured("fp32", 1000, 400), measured("lean", 900, 100), measured("fast", 3000, 500),
         measured("beaten", 800, 450), measured("twin", 3000, 500), out},
        "fp32", 64);
    std::vector<std::string> front;
    for (int i : paretoFront(a)) {
        front.push_back(a.rows[static_cast<size_t>(i)].f.arm);
    }
    // Least memory first; "beaten" loses to fp32 on both; equal twins both stay.
    ASSERT_EQ(front.size(), 4u);
    EXPECT_EQ(front[0], "lean");
    EXPECT_EQ(front[1], "fp32");
    EXPECT_TRUE((front[2] == "fast" && front[3] == "twin") ||
                (front[2] == "twin" && front[3] == "fast"));
}

TEST(AdviceLines, Fp16WithAccumulationGetsItsScalerAndTheStepEveryK) {
    CandidateFigures f = checked(measured("amp-fp16-b128x4", 3000, 100, 128), Verdict::Aligned);
    f.format = "amp-fp16";
    f.precision = config::Precision::AmpFp16;
    f.accumulation = 4;
    f.effective_batch = 512;
    f.lr = 0.4;
    Advice a =
        rankCandidates({checked(measured("fp32", 1000, 400), Verdict::Baseline), f}, "fp32", 64);
    a.device = "cuda:0";
    config::ExperimentSpec spec = cnn(64);
    std::string all;
    for (const auto& l : pytorchLines(a, spec)) {
        all += l + "\n";
    }
    EXPECT_NE(all.find("batch_size=128"), std::string::npos) << all;
    EXPECT_NE(all.find("GradScaler(\"cuda\""), std::string::npos) << all;
    EXPECT_NE(all.find("dtype=torch.float16"), std::string::npos) << all;
    EXPECT_NE(all.find("loss = loss_fn(model(x), y) / 4"), std::string::npos) << all;
    EXPECT_NE(all.find("% 4 != 0"), std::string::npos) << all;
    EXPECT_NE(all.find("scaler.step(optimizer)"), std::string::npos) << all;
    EXPECT_NE(all.find("lr=0.4"), std::string::npos) << all;

    spec.arms = {config::ArmSpec{}, config::ArmSpec{}};
    spec.arms[0].name = "fp32";
    spec.arms[1].name = "amp-fp16-b128x4";
    spec.name = "cnn-advice";
    const config::ExperimentSpec rec = recommendedSpec(a, spec);
    EXPECT_EQ(rec.name, "cnn-recommended");
    ASSERT_EQ(rec.arms.size(), 2u);
    EXPECT_EQ(rec.arms[1].name, "amp-fp16-b128x4");
    EXPECT_EQ(rec.seeds.size(), 3u);
}

namespace {

/// An advice as train::advise records it: a pass run of each candidate (its planned arm
/// says so), then two seeds of fp32 and of the first candidate.
ExperimentData recordedAdvice(double bf16_shift) {
    using namespace fixtures;
    ExperimentData d;
    d.experiment.id = 7;
    d.spec = cnn(kMicroBatch);
    d.spec.arms.clear();
    for (const char* name : {"fp32", "amp-bf16", "amp-bf16-b128"}) {
        config::ArmSpec arm;
        arm.name = name;
        arm.precision =
            std::string(name) == "fp32" ? config::Precision::Fp32 : config::Precision::AmpBf16;
        arm.micro_batch = std::string(name) == "amp-bf16-b128" ? 128 : 0;
        d.spec.arms.push_back(arm);
    }
    d.spec_ok = true;
    d.experiment.spec_json = config::specToJsonText(d.spec);
    int64_t id = 1;
    auto planned = [&](const config::ArmSpec& arm, bool pass) {
        config::PlannedArm p = config::planArm(d.spec, arm, false);
        p.timing_pass = pass;
        return config::plannedArmToJson(p);
    };
    const double ms[] = {1.0, 0.6, 0.5};
    for (size_t i = 0; i < d.spec.arms.size(); ++i) {
        RunShape s;
        s.arm = d.spec.arms[i].name;
        s.ms_per_sample = ms[i];
        RunData pass = makeRun(id++, s);
        pass.steps.resize(12);  // a pass: a few steps, no evaluation
        const int64_t own = config::microBatchOf(d.spec, d.spec.arms[i]);
        for (auto& step : pass.steps) {  // at its own batch, its time per sample as given
            step.samples = step.samples / kMicroBatch * own;
            step.step_ms =
                step.step_ms / static_cast<double>(kMicroBatch) * static_cast<double>(own);
        }
        pass.evals.clear();
        pass.row.spec_json = planned(d.spec.arms[i], true);
        d.runs.push_back(pass);
    }
    for (uint64_t seed : {1, 2}) {
        for (size_t i = 0; i < 2; ++i) {
            RunShape s;
            s.arm = d.spec.arms[i].name;
            s.seed = seed;
            s.shift = i == 1 ? bf16_shift : 0;
            s.accuracy = 0.85 - (i == 1 && bf16_shift > 0 ? 0.2 : 0) +
                         (static_cast<double>(seed) - 1.5) * 0.002;
            s.precision = i == 1 ? "amp-bf16" : "fp32";
            s.ms_per_sample = 5;  // fused seeds: not the device's alone
            RunData r = makeRun(id++, s);
            r.row.spec_json = planned(d.spec.arms[i], false);
            d.runs.push_back(r);
        }
    }
    return d;
}

}  // namespace

TEST(AdviceRecorded, PassesGiveTheSpeedQualityRunsTheVerdictAndAPassOnlyArmIsNotJudged) {
    const ExperimentData d = recordedAdvice(0);
    ASSERT_TRUE(isAdvice(d));
    const ExperimentAnalysis an = analyzeExperiment(d);
    for (const auto& s : an.runs) {  // passes give no curve and no row of the run table
        EXPECT_GT(s.run_id, 3) << s.run_id;
    }
    const ArmVerdict* only_pass = nullptr;
    for (const auto& v : an.verdicts) {
        if (v.arm == "amp-bf16-b128") {
            only_pass = &v;
        }
    }
    ASSERT_NE(only_pass, nullptr);
    EXPECT_EQ(only_pass->summary.code, FindingCode::TimedAloneOnly);
    EXPECT_NEAR(only_pass->gains.speedup, 2.0, 0.15);  // from the passes: 1.0 / 0.5 ms a sample

    const Advice a = readAdvice(d, an);
    EXPECT_EQ(a.baseline, "fp32");
    EXPECT_TRUE(a.quality_checked);
    const AdviceRow* big = nullptr;
    const AdviceRow* bf16 = nullptr;
    for (const auto& r : a.rows) {
        if (r.f.arm == "amp-bf16-b128") {
            big = &r;
        } else if (r.f.arm == "amp-bf16") {
            bf16 = &r;
        }
    }
    ASSERT_NE(big, nullptr);
    ASSERT_NE(bf16, nullptr);
    EXPECT_FALSE(big->f.checked);
    EXPECT_EQ(big->f.effective_batch, 128);
    EXPECT_TRUE(bf16->f.checked);
    EXPECT_NEAR(bf16->speed_ratio, 1.0 / 0.6, 0.1);  // the passes', not the fused runs'
    EXPECT_EQ(a.kind, Recommendation::Candidate);
    EXPECT_EQ(a.recommendation()->f.arm, "amp-bf16");
}

TEST(AdviceRecorded, ACandidateWhoseCurveLeavesTheBandIsRuledOutWithItsVerdict) {
    const ExperimentData d = recordedAdvice(0.5);
    const Advice a = readAdvice(d, analyzeExperiment(d));
    bool ruled = false;
    for (const auto& r : a.rows) {
        if (r.f.arm == "amp-bf16") {
            ruled = r.status == RowStatus::RuledOut;
            EXPECT_FALSE(reasonText(r, a.baseline).empty());
        }
    }
    EXPECT_TRUE(ruled);
    EXPECT_NE(a.recommendation()->f.arm, "amp-bf16");
    const nlohmann::json j = adviceJson(a, d.spec);
    EXPECT_EQ(j["baseline"], "fp32");
    EXPECT_EQ(j["candidates"].size(), 3u);
    EXPECT_FALSE(j["recommendation"]["sentence"].get<std::string>().empty());
}
