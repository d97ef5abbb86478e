// The fast verdict's figures: packed runs say nothing of the GPU alone, so their
// speed-up and memory come from each arm's pass alone (alone_timing events).
#include <gtest/gtest.h>

#include <cmath>

#include "core/analysis/AnalysisJson.h"
#include "core/analysis/ExperimentAnalysis.h"
#include "core/analysis/Finding.h"
#include "core/analysis/Gains.h"
#include "core/run/AloneTiming.h"
#include "core/run/FusedGroup.h"
#include "tests/core/AnalysisFixtures.h"

using namespace ampbench;
using namespace ampbench::analysis;
using namespace ampbench::analysis::fixtures;

namespace {

run::AloneTiming pass(const std::string& mode, double step_ms, int64_t samples, int64_t peak,
                      double device_ms = NAN) {
    run::AloneTiming t;
    t.mode = mode;
    t.warmup_steps = 5;
    for (int i = 0; i < 20; ++i) {
        // A little spread around the step time, so the interval is not a point.
        t.step_ms.push_back(step_ms * (1.0 + 0.01 * ((i % 5) - 2)));
        t.step_samples.push_back(samples);
    }
    t.peak_allocated = peak;
    t.peak_reserved = peak * 2;
    t.device_ms = device_ms;
    return t;
}

/// Two arms × three seeds whose runs' own steps all take the same time (packed on
/// one GPU); the first seed of each arm carries its passes alone.
ExperimentData packed(bool with_graph) {
    ExperimentData d;
    d.experiment.id = 1;
    d.experiment.name = "packed";
    int64_t id = 1;
    for (const char* arm : {"fp32", "amp"}) {
        const bool amp = std::string(arm) == "amp";
        for (uint64_t seed = 1; seed <= 3; ++seed) {
            RunShape s;
            s.arm = arm;
            s.seed = seed;
            s.precision = amp ? "amp-fp16" : "fp32";
            s.ms_per_sample = 1.0;  // shared: alike, and not the GPU's alone
            RunData r = makeRun(id++, s);
            if (with_graph) {  // what fastVerdictSpec stores for an arm whose graph was timed
                auto arm = nlohmann::json::parse(r.row.spec_json);
                arm["cuda_graph"] = true;
                r.row.spec_json = arm.dump();
            }
            if (seed == 1) {
                r.events.push_back(run::aloneTimingEvent(
                    pass("eager", amp ? 2.5 : 2.0, 128, amp ? 60 : 100, amp ? 0.5 : 1.8)));
                if (with_graph) {
                    r.events.push_back(run::aloneTimingEvent(
                        pass("graph", amp ? 0.5 : 1.0, 128, amp ? 50 : 100, NAN)));
                }
            }
            d.runs.push_back(std::move(r));
        }
    }
    return d;
}

}  // namespace

TEST(AloneTiming, TheEventCarriesThePassExactlyAndNothingElseReadsAsOne) {
    const auto t = pass("graph", 0.1 + 0.2, 96, 123456789, 0.25);
    const auto e = run::aloneTimingEvent(t);
    EXPECT_EQ(e.kind, run::EventKind::AloneTiming);
    EXPECT_EQ(run::toString(e.kind), "alone_timing");
    const auto back = run::aloneTimingOf(e);
    ASSERT_TRUE(back);
    EXPECT_EQ(back->mode, "graph");
    EXPECT_EQ(back->step_ms, t.step_ms);  // exact doubles
    EXPECT_EQ(back->step_samples, t.step_samples);
    EXPECT_EQ(back->peak_allocated, 123456789);
    EXPECT_EQ(back->peak_reserved, 2 * 123456789LL);
    EXPECT_EQ(back->device_ms, 0.25);
    EXPECT_DOUBLE_EQ(e.value, t.msPerSample());
    EXPECT_NEAR(e.value, 0.3 / 96, 0.01 * 0.3 / 96);

    // Another kind, text that is not JSON, a mode no pass has, lists that disagree.
    auto other = e;
    other.kind = run::EventKind::Info;
    EXPECT_FALSE(run::aloneTimingOf(other));
    for (const char* message :
         {"not json", "[]", R"({"mode":"turbo","step_ms":[1],"step_samples":[1]})",
          R"({"mode":"eager","step_ms":[1,2],"step_samples":[1]})",
          R"({"mode":"eager","step_ms":"fast","step_samples":[1]})"}) {
        auto bad = e;
        bad.message = message;
        EXPECT_FALSE(run::aloneTimingOf(bad)) << message;
    }
}

TEST(FastVerdict, PackedRunsTakeTheirSpeedAndMemoryFromEachArmAlone) {
    const auto a = analyzeExperiment(packed(true));
    const auto& amp = verdictOf(a, "amp");
    // The runs' own times are alike (1.0×); alone in graph mode amp is twice as fast.
    EXPECT_EQ(amp.gains.timing_mode, "graph");
    EXPECT_NEAR(amp.gains.speedup, 2.0, 1e-9);
    EXPECT_TRUE(std::isfinite(amp.gains.speedup_ci.low));
    EXPECT_LE(amp.gains.speedup_ci.low, 2.0);
    EXPECT_GE(amp.gains.speedup_ci.high, 2.0);
    EXPECT_NEAR(amp.gains.memory_ratio, 0.5, 1e-9);
    EXPECT_NEAR(amp.gains.eager_speedup, 0.8, 1e-9);
    EXPECT_NEAR(amp.gains.eager_memory_ratio, 0.6, 1e-9);
    EXPECT_EQ(amp.gains.timed_steps, 20);
    EXPECT_GT(amp.gains.optimizer_steps, 20);  // the runs' own, not the pass's

    std::string text;
    for (const auto& f : amp.reasons) {
        if (f.code == FindingCode::Gains) {
            text = describe(f);
        }
    }
    EXPECT_NE(text.find("speed-up 2.00"), std::string::npos) << text;
    EXPECT_NE(text.find("alone on the GPU, in CUDA-graph mode"), std::string::npos) << text;
    EXPECT_NE(text.find("in eager mode: speed-up 0.80"), std::string::npos) << text;
    const auto j = toJson(a);
    bool found = false;
    for (const auto& v : j.at("verdicts")) {
        if (v.at("arm") == "amp") {
            EXPECT_EQ(v.at("gains").at("timing"), "alone_graph");
            EXPECT_NEAR(v.at("gains").at("eager_speedup").get<double>(), 0.8, 1e-9);
            found = true;
        }
    }
    EXPECT_TRUE(found) << j.dump();

    // The eager pass says how busy a plain run keeps the GPU: amp 0.5 of 2.5 ms.
    EXPECT_NEAR(amp.health.device_busy_share, 0.2, 0.01);
    EXPECT_TRUE(amp.health.launch_bound);
    EXPECT_TRUE(amp.health.busy_from_eager_pass);
    EXPECT_NEAR(verdictOf(a, "fp32").health.device_busy_share, 0.9, 0.01);
    // ... and the sentence says so: the runs trained as graphs, the figure is eager's.
    std::string busy, launch;
    for (const auto& f : amp.reasons) {
        if (f.code == FindingCode::DeviceBusy) {
            busy = describe(f);
        }
    }
    for (const auto& f : amp.next_checks) {
        if (f.code == FindingCode::LaunchBound) {
            launch = describe(f);
        }
    }
    EXPECT_NE(busy.find("GPU busy 20% of an eager step, the arm alone on it"), std::string::npos)
        << busy;
    EXPECT_NE(launch.find("Launched op by op, AMP cannot pay here: the GPU is busy 20% of an "
                          "eager step"),
              std::string::npos)
        << launch;
    EXPECT_NE(launch.find("This arm trained as a CUDA graph"), std::string::npos) << launch;
    EXPECT_EQ(launch.find("already replays"), std::string::npos) << launch;
}

TEST(FastVerdict, EagerPassesAloneAreUsedAndSaidSoWhereNoGraphWasTimed) {
    const auto a = analyzeExperiment(packed(false));
    const auto& amp = verdictOf(a, "amp");
    EXPECT_EQ(amp.gains.timing_mode, "eager");
    EXPECT_NEAR(amp.gains.speedup, 0.8, 1e-9);
    EXPECT_FALSE(std::isfinite(amp.gains.eager_speedup));
    std::string text;
    for (const auto& f : amp.reasons) {
        if (f.code == FindingCode::Gains) {
            text = describe(f);
        }
    }
    EXPECT_NE(text.find("alone on its device, in eager mode"), std::string::npos) << text;
}

TEST(FastVerdict, RunsWithoutPassesKeepTheirOwnFigures) {
    auto d = packed(false);
    for (auto& r : d.runs) {
        r.events.clear();
    }
    const auto a = analyzeExperiment(d);
    const auto& amp = verdictOf(a, "amp");
    EXPECT_EQ(amp.gains.timing_mode, "");
    EXPECT_NEAR(amp.gains.speedup, 1.0, 0.1);
    EXPECT_EQ(toJson(a).at("verdicts").at(1).at("gains").at("timing"), "runs");
}

TEST(FastVerdict, ALaunchBoundBaselineSaysWhatItMeansNotThatAmpCannotPay) {
    auto d = packed(true);
    for (auto& r : d.runs) {
        for (auto& e : r.events) {
            auto t = run::aloneTimingOf(e);
            if (r.row.arm == "fp32" && t && t->mode == "eager") {
                t->device_ms = 0.4;  // 20% of its 2 ms eager step
                e = run::aloneTimingEvent(*t);
            }
        }
    }
    const auto a = analyzeExperiment(d);
    const auto& base = verdictOf(a, "fp32");
    ASSERT_TRUE(base.health.launch_bound);
    std::string launch;
    for (const auto& f : base.next_checks) {
        if (f.code == FindingCode::LaunchBound) {
            launch = describe(f);
        }
    }
    ASSERT_FALSE(launch.empty());
    EXPECT_EQ(launch.find("AMP cannot pay"), std::string::npos) << launch;
    EXPECT_NE(launch.find("Launch-bound: the GPU is busy 20% of an eager step"), std::string::npos)
        << launch;
    EXPECT_NE(launch.find("the other arms' speed-ups are capped"), std::string::npos) << launch;
}

TEST(FastVerdict, AnAccuracyOfZeroForEveryArmSetsNoTimeToReachIt) {
    // Synthetic tokens: every arm's accuracy is 0.00 %, reached before the first step.
    const auto d = fp32AndAmp("tokens", "amp-bf16", [](RunShape& s) { s.accuracy = 0; });
    const auto& amp = verdictOf(analyzeExperiment(d), "amp");
    for (const auto& f : amp.reasons) {
        EXPECT_NE(f.code, FindingCode::TimeToTarget) << describe(f);
    }
    EXPECT_FALSE(std::isfinite(amp.time_to_target.target));
}

TEST(FusedGroup, TheEventNamesItsSizeAndNothingElseReadsAsOne) {
    const auto e = run::fusedSeedsEvent({1, 2, 3});
    EXPECT_EQ(run::fusedGroupOf(e), 3);
    EXPECT_NE(e.message.find("seeds 1, 2, 3"), std::string::npos) << e.message;
    EXPECT_EQ(run::fusedGroupSize({{0, run::EventKind::Info, "dynamic loss scaling", 3.0}, e}), 3);
    EXPECT_EQ(run::fusedGroupSize({{0, run::EventKind::Info, "dynamic loss scaling", 3.0}}), 1);
    auto warning = e;
    warning.kind = run::EventKind::Warning;
    EXPECT_EQ(run::fusedGroupOf(warning), 0);
    auto damaged = e;
    damaged.value = NAN;
    EXPECT_EQ(run::fusedGroupOf(damaged), 0);
    damaged.value = 2.5;
    EXPECT_EQ(run::fusedGroupOf(damaged), 0);
}

TEST(FusedGroup, AFusedMembersStepTimeIsSharedByItsGroup) {
    // fp32's three seeds trained fused: each member recorded the fused step, which took
    // 2.4x one run's step and trained all three runs' samples. amp trained one at a time
    // at 0.5x one fp32 run's time. Per sample, fp32 took 0.8 and amp 0.5: amp is 1.6x
    // faster, not the 4.8x the members' own step times would say.
    auto d = packed(false);
    for (auto& r : d.runs) {
        r.events.clear();
        const bool amp = r.row.arm == "amp";
        for (auto& s : r.steps) {
            s.step_ms *= amp ? 0.5 : 2.4;
            s.mem_peak = amp ? 600 : 3000;  // fp32's group held 3 × 1000
        }
        if (!amp) {
            r.events.push_back(run::fusedSeedsEvent({1, 2, 3}));
        }
    }
    const auto a = analyzeExperiment(d);
    const auto& amp = verdictOf(a, "amp");
    EXPECT_NEAR(amp.gains.speedup, 1.6, 0.05);
    EXPECT_NEAR(amp.gains.throughput_ratio, 1.6, 0.05);
    // The table's columns say the same: samples/s and the speed-up of each arm.
    ASSERT_EQ(a.arms.size(), 2u);
    EXPECT_EQ(a.arms[1].arm, "amp");
    EXPECT_NEAR(a.arms[1].speedup, 1.6, 0.05);
    EXPECT_NEAR(a.arms[1].samples_per_s / a.arms[0].samples_per_s, 1.6, 0.05);
    // Memory: each fused member's share of its group's peak.
    EXPECT_NEAR(amp.gains.memory_ratio, 0.6, 1e-9);
    EXPECT_NEAR(a.arms[1].memory_ratio, 0.6, 1e-9);
}
