// The fast verdict in the engine: each arm timed alone, then the runs packed in
// CUDA-graph mode; the events a run opens with; an arm whose step cannot be
// captured trains eagerly and says so.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "core/analysis/ExperimentAnalysis.h"
#include "core/analysis/ExperimentData.h"
#include "core/config/SpecJson.h"
#include "core/run/AloneTiming.h"
#include "core/store/Database.h"
#include "core/train/Experiment.h"
#include "core/train/Trainer.h"
#include "core/train/private/FastVerdict.h"
#include "tests/core/CudaSpecs.h"
#include "tests/core/ScratchDir.h"
#include "tests/core/ScriptedModules.h"

using namespace ampbench;

namespace {

struct Events : run::TrainObserver {
    std::vector<run::EventRecord> events;
    int64_t steps = 0;
    bool finite = true;
    run::RunOutcome outcome;
    void onStep(const run::StepRecord& s) override {
        ++steps;
        finite = finite && std::isfinite(s.loss);
    }
    void onEvent(const run::EventRecord& e) override { events.push_back(e); }
    void onFinish(const run::RunOutcome& o) override { outcome = o; }
};

/// The MLP on generated 8×8 images, two arms, two seeds.
config::ExperimentSpec smallSpec() {
    config::ExperimentSpec s;
    s.name = "fast";
    s.model.name = "mlp";
    s.model.width = 32;
    s.data.name = "synthetic-images";
    s.data.channels = 1;
    s.data.height = s.data.width = 8;
    s.micro_batch = 32;
    s.micro_steps = 24;
    s.eval_interval = 0;
    s.eval_batches = 1;
    s.warmup_steps = 2;
    s.cpu_threads = 1;
    s.seeds = {1, 2};
    s.arms = {{"fp32", config::Precision::Fp32}, {"bf16", config::Precision::AmpBf16}};
    return s;
}

bool contains(const std::vector<std::string>& lines, const std::string& part) {
    for (const auto& l : lines) {
        if (l.find(part) != std::string::npos) {
            return true;
        }
    }
    return false;
}

class FastVerdict : public test::ScratchDirTest {
  protected:
    /// Runs the experiment into fast.db, keeping the notes it gives.
    train::ExperimentResult runNoted(const config::ExperimentSpec& spec) {
        db_ = store::Database::open(file("fast.db"));
        train::ExperimentHooks hooks;
        hooks.note = [this](const std::string& line) { notes_.push_back(line); };
        run::CancelToken cancel;
        return train::runExperiment(*db_, spec, cancel, hooks);
    }
    std::unique_ptr<store::Database> db_;
    std::vector<std::string> notes_;
};

}  // namespace

TEST_F(FastVerdict, ARunOpensWithTheEventsMeasuredForItsArm) {
    auto spec = smallSpec();
    spec.device = config::DeviceKind::Cpu;
    run::AloneTiming pass;
    pass.mode = "eager";
    pass.step_ms = {1.5, 1.25};
    pass.step_samples = {32, 32};
    train::TrainOptions o;
    int asked_arm = -1;
    uint64_t asked_seed = 0;
    o.opening_events = [&](int arm, uint64_t seed) {
        asked_arm = arm;
        asked_seed = seed;
        return std::vector<run::EventRecord>{run::aloneTimingEvent(pass)};
    };
    Events seen;
    run::CancelToken cancel;
    const auto out = train::trainRun(spec, 1, 2, seen, cancel, o);
    ASSERT_EQ(out.status, run::RunStatus::Finished) << out.error;
    EXPECT_EQ(asked_arm, 1);
    EXPECT_EQ(asked_seed, 2u);
    ASSERT_FALSE(seen.events.empty());
    const auto back = run::aloneTimingOf(seen.events.front());
    ASSERT_TRUE(back) << seen.events.front().message;
    EXPECT_EQ(back->step_ms, pass.step_ms);
}

TEST_F(FastVerdict, OnTheCpuTheRunsTrainAsAskedAndTheNoteSaysWhy) {
    auto spec = smallSpec();
    spec.device = config::DeviceKind::Cpu;
    spec.fast_verdict = true;
    const auto result = runNoted(spec);
    auto& db = db_;
    const auto& notes = notes_;
    ASSERT_EQ(result.plan.runs.size(), 4u);
    EXPECT_TRUE(contains(notes, "no CUDA device here")) << (notes.empty() ? "" : notes[0]);
    const auto stored = train::storedSpec(*db, result.plan.experiment_id);
    EXPECT_TRUE(stored.fast_verdict);
    EXPECT_EQ(stored.runs_per_gpu, 1);
    for (const auto& arm : stored.arms) {
        EXPECT_FALSE(arm.cuda_graph) << arm.name;
    }
    for (const auto& r : result.plan.runs) {
        EXPECT_EQ(db->run(r.run_id)->status, run::RunStatus::Finished);
        for (const auto& e : db->events(r.run_id)) {
            EXPECT_NE(e.kind, run::EventKind::AloneTiming) << "a pass alone on the CPU";
        }
    }
}

TEST_F(FastVerdict, CudnnTuningIsOffUnderTheFastVerdictUnlessTheSpecSaysOnAndTheStoredSpecSaysSo) {
    auto spec = smallSpec();
    spec.fast_verdict = true;
    ASSERT_EQ(spec.cudnn_benchmark, config::Switch::Auto);
    EXPECT_FALSE(config::cudnnBenchmark(spec));
    std::vector<std::string> notes;
    auto note = [&](const std::string& line) { notes.push_back(line); };
    auto planned = train::fastVerdictSpec(spec, {}, {}, 1, note);
    EXPECT_EQ(planned.cudnn_benchmark, config::Switch::Off);  // stored as what the runs did
    EXPECT_TRUE(contains(notes, "cuDNN autotuning off (auto under the fast verdict"))
        << (notes.empty() ? "" : notes.back());
    const auto events = train::fastVerdictEvents(planned, {}, 0, spec.seeds.front());
    ASSERT_FALSE(events.empty());
    EXPECT_NE(events.front().message.find("cuDNN autotuning off"), std::string::npos);

    spec.cudnn_benchmark = config::Switch::On;  // an explicit true is kept
    notes.clear();
    planned = train::fastVerdictSpec(spec, {}, {}, 1, note);
    EXPECT_EQ(planned.cudnn_benchmark, config::Switch::On);
    EXPECT_TRUE(contains(notes, "cuDNN autotuning on (as the spec says)"));

    spec.fast_verdict = false;
    spec.cudnn_benchmark = config::Switch::Auto;
    EXPECT_TRUE(config::cudnnBenchmark(spec));  // a plain experiment tunes, as before
}

namespace {

/// A pass of arm `arm` that trained alone at `ms_per_step` for `samples` a step.
train::AlonePass alonePass(int arm, const std::string& mode, double ms_per_step, int64_t reserved) {
    train::AlonePass p;
    p.arm_index = arm;
    p.ok = true;
    p.captured = mode == "graph";
    p.timing.mode = mode;
    p.timing.step_ms.assign(40, ms_per_step);
    p.timing.step_samples.assign(40, 32);
    p.timing.peak_reserved = reserved;
    return p;
}

train::SharingPass sharingPass(int arm, int members, int copies, double samples_per_s,
                               int64_t reserved) {
    train::SharingPass p;
    p.arm_index = arm;
    p.members = members;
    p.copies = copies;
    p.samples_per_s = samples_per_s;
    p.peak_reserved = reserved;
    p.ok = true;
    return p;
}

constexpr int64_t gib = int64_t{1} << 30;

/// A fast-verdict spec of two arms of seeds 1-3 and each arm's graph pass alone: 32
/// samples a millisecond, 1 GiB.
std::pair<config::ExperimentSpec, std::vector<train::AlonePass>> twoArmsOfThreeSeeds() {
    auto spec = smallSpec();
    spec.fast_verdict = true;
    spec.seeds = {1, 2, 3};
    return {spec, {alonePass(0, "graph", 1.0, gib), alonePass(1, "graph", 1.0, gib)}};
}

}  // namespace

// One run alone: 32 samples in 1 ms, 32,000 samples/s; three seeds an arm, two arms.
TEST(ChooseSharing, SeedsFuseWhereFusingBeatsOneRunAndTheSameRunsOnStreams) {
    const auto [spec, alone] = twoArmsOfThreeSeeds();
    // Three seeds fused: 2.8x one run; three runs on streams: 2.0x; two fused units
    // side by side: 1.9x one unit.
    std::vector<train::SharingPass> sharing = {
        sharingPass(0, 3, 1, 89600, 2 * gib), sharingPass(1, 3, 1, 89600, 2 * gib),
        sharingPass(0, 1, 3, 64000, 3 * gib), sharingPass(0, 3, 2, 1.9 * 89600, 4 * gib)};
    auto c = train::chooseSharing(spec, alone, sharing, 1, 140 * gib);
    EXPECT_TRUE(c.fuse);
    EXPECT_EQ(c.per_gpu, 2);  // two fused units, both at once
    EXPECT_NE(c.fuse_why.find("seeds trained 2.80x one run's samples/s"), std::string::npos)
        << c.fuse_why;
    EXPECT_NE(c.pack_why.find("2 of arm 'fp32''s fused seeds side by side trained 1.90x"),
              std::string::npos)
        << c.pack_why;

    // The recipe's CNN as graphs on an H100: fused 1.32x one run, but three runs on
    // streams 1.63x. Streams win: not fused, and six runs pack all at once.
    sharing = {sharingPass(0, 3, 1, 1.32 * 32000, 2 * gib), sharingPass(1, 3, 1, 42240, 2 * gib),
               sharingPass(0, 1, 3, 1.63 * 32000, 3 * gib)};
    c = train::chooseSharing(spec, alone, sharing, 1, 140 * gib);
    EXPECT_FALSE(c.fuse);
    EXPECT_NE(c.fuse_why.find("but 3 runs of arm 'fp32' side by side trained 1.63x against its "
                              "fused 1.32x"),
              std::string::npos)
        << c.fuse_why;
    EXPECT_EQ(c.per_gpu, 6) << c.pack_why;
}

TEST(ChooseSharing, UnitsPackAsFarAsTheyGainedSideBySideAndAsTheMemoryHolds) {
    auto [spec, alone] = twoArmsOfThreeSeeds();
    // Fused seeds that gain 1.1x: not fused; six runs, and three on streams gain 1.3x.
    std::vector<train::SharingPass> sharing = {sharingPass(0, 3, 1, 35200, 2 * gib),
                                               sharingPass(1, 3, 1, 35200, 2 * gib),
                                               sharingPass(0, 1, 3, 1.3 * 32000, 3 * gib)};
    auto c = train::chooseSharing(spec, alone, sharing, 1, 140 * gib);
    EXPECT_FALSE(c.fuse);
    EXPECT_NE(c.fuse_why.find("seeds not fused"), std::string::npos) << c.fuse_why;
    EXPECT_EQ(c.per_gpu, 3) << c.pack_why;  // between 1.25x and 1.6x: as many as measured

    // A model that keeps the GPU busy: side by side gains 1.02x, so one at a time.
    sharing.back().samples_per_s = 1.02 * 32000;
    c = train::chooseSharing(spec, alone, sharing, 1, 140 * gib);
    EXPECT_EQ(c.per_gpu, 1);
    EXPECT_NE(c.pack_why.find("one keeps the GPU busy"), std::string::npos) << c.pack_why;

    // Packing that pays, held to what 85 % of the GPU's memory holds: 3 of 4 GiB in 16.
    sharing.back().samples_per_s = 3.0 * 32000;
    c = train::chooseSharing(spec, alone, sharing, 1, 16 * gib);
    EXPECT_EQ(c.per_gpu, 6);  // six runs of 1 GiB: 13.6 GiB fit
    c = train::chooseSharing(
        spec, {alonePass(0, "graph", 1.0, 4 * gib), alonePass(1, "graph", 1.0, 4 * gib)}, sharing,
        1, 16 * gib);
    EXPECT_EQ(c.per_gpu, 3);
    EXPECT_NE(c.pack_why.find("what 85 % of the GPU's memory holds"), std::string::npos);

    // An explicit fuse_seeds is kept whatever the passes say.
    spec.fuse_seeds = config::Switch::Off;
    c = train::chooseSharing(spec, alone, {sharingPass(0, 3, 1, 89600, 2 * gib)}, 1, 140 * gib);
    EXPECT_FALSE(c.fuse);
    EXPECT_NE(c.fuse_why.find("fuse_seeds false (as the spec says)"), std::string::npos);
}

TEST_F(FastVerdict, OnCudaEachArmIsTimedAloneAndTheRunsTrainPackedInGraphs) {
    REQUIRE_CUDA();
    auto spec = test_cuda::cudaCnnSpec(60, config::Precision::Fp32);
    spec.name = "fast";
    spec.arms = {{"fp32", config::Precision::Fp32}, {"amp", config::Precision::AmpFp16}};
    spec.seeds = {1, 2};
    spec.warmup_steps = 5;
    spec.fast_verdict = true;
    const auto result = runNoted(spec);
    auto& db = db_;
    const auto& notes = notes_;
    ASSERT_EQ(result.plan.runs.size(), 4u);
    EXPECT_TRUE(contains(notes, "arm 'fp32' alone, eager")) << notes.size();
    EXPECT_TRUE(contains(notes, "arm 'amp' alone, graph")) << notes.size();
    // Fusion and packing are measured, then chosen: each arm's seeds fused, then two
    // units side by side, each pass named in the notes with its rate.
    EXPECT_TRUE(contains(notes, "arm 'fp32', 2 seeds fused: ")) << notes.size();
    EXPECT_TRUE(contains(notes, "arm 'fp32', 2 x (one run) side by side: ") ||
                contains(notes, "arm 'amp', 2 x (one run) side by side: "))
        << notes.size();
    const auto stored = train::storedSpec(*db, result.plan.experiment_id);
    const bool fused = stored.fuse_seeds == config::Switch::On;
    EXPECT_TRUE(contains(notes, fused ? "(seeds fused: an arm's seeds trained "
                                      : "(seeds not fused: an arm's seeds trained "));
    EXPECT_TRUE(contains(notes, fused ? "fused seeds: 'fp32', 'amp' train each arm's seeds"
                                      : "fast verdict: 4 runs, "));
    EXPECT_GE(stored.runs_per_gpu, 1);
    EXPECT_LE(stored.runs_per_gpu, fused ? 2 : 4);
    std::printf("fast verdict on the GPU: fused %d, %d at a time per GPU\n", fused ? 1 : 0,
                stored.runs_per_gpu);
    EXPECT_EQ(stored.cudnn_benchmark, config::Switch::Off);
    EXPECT_NE(stored.fuse_seeds, config::Switch::Auto);  // resolved, as the runs trained
    EXPECT_TRUE(contains(notes, "cuDNN autotuning off (auto under the fast verdict"));
    for (const auto& arm : stored.arms) {
        EXPECT_TRUE(arm.cuda_graph) << arm.name;
    }
    for (const auto& r : result.plan.runs) {
        const auto row = db->run(r.run_id);
        EXPECT_EQ(row->status, run::RunStatus::Finished) << row->error;
        std::vector<std::string> modes;
        for (const auto& e : db->events(r.run_id)) {
            if (auto pass = run::aloneTimingOf(e)) {
                modes.push_back(pass->mode);
                EXPECT_GT(pass->step_ms.size(), 30u);
                EXPECT_GT(pass->peak_allocated, 0);
            }
        }
        if (r.seed == 1) {
            EXPECT_EQ(modes, (std::vector<std::string>{"eager", "graph"})) << r.arm;
        } else {
            EXPECT_TRUE(modes.empty()) << r.arm;
        }
    }
    const auto data = analysis::loadExperiment(*db, result.plan.experiment_id);
    ASSERT_TRUE(data);
    const auto a = analysis::analyzeExperiment(*data);
    for (const auto& v : a.verdicts) {
        if (v.arm == "amp") {
            EXPECT_EQ(v.gains.timing_mode, "graph");
            EXPECT_TRUE(std::isfinite(v.gains.speedup));
            EXPECT_TRUE(std::isfinite(v.gains.eager_speedup));
            std::printf("fast verdict on the GPU: amp alone, graph %.2fx, eager %.2fx\n",
                        v.gains.speedup, v.gains.eager_speedup);
        }
    }
}

/// A model file that reads a value back to the host in its forward (no graph holds
/// that), with dropout after it where `dropout` is set.
static std::string syncingModel(const std::string& path, bool dropout) {
    torch::manual_seed(3);
    torch::jit::Module m("__torch__.Syncing");
    m.register_attribute("training", c10::BoolType::get(), true);
    m.register_parameter("w1", (at::randn({32, 64}) * 0.1).requires_grad_(), false);
    m.register_parameter("w2", (at::randn({10, 32}) * 0.1).requires_grad_(), false);
    m.define(std::string("def forward(self, x):\n"
                         "    h = torch.relu(torch.matmul(x.flatten(1), self.w1.t()))\n"
                         "    if bool(h.sum() < -1.0e30):\n"
                         "        h = h * 0.0\n") +
             (dropout ? "    h = torch.dropout(h, 0.2, self.training)\n" : "") +
             "    return torch.matmul(h, self.w2.t())\n");
    m.save(path);
    return path;
}

/// A graph arm of that model on 8×8 images, 20 steps.
static config::ExperimentSpec syncingSpec(const std::string& model) {
    config::ExperimentSpec spec = test_cuda::cudaSpec(32, 20, config::Precision::Fp32);
    spec.model.name = "torchscript";
    spec.model.file = model;
    spec.data.name = "synthetic-images";
    spec.data.channels = 1;
    spec.data.height = spec.data.width = 8;
    spec.arms[0].cuda_graph = true;
    return spec;
}

TEST_F(FastVerdict, AStepThatCannotBeCapturedTrainsEagerlyAndSaysWhy) {
    REQUIRE_CUDA();
    const config::ExperimentSpec spec = syncingSpec(syncingModel(file("syncing.pt"), false));
    Events seen;
    run::CancelToken cancel;
    const auto out = train::trainRun(spec, 0, 1, seen, cancel, {});
    ASSERT_EQ(out.status, run::RunStatus::Finished) << out.error;
    EXPECT_EQ(seen.steps, 20);
    EXPECT_TRUE(seen.finite);
    bool warned = false;
    for (const auto& e : seen.events) {
        warned = warned ||
                 (e.kind == run::EventKind::Warning &&
                  e.message.find("could not be captured as a CUDA graph") != std::string::npos);
    }
    EXPECT_TRUE(warned);
}

TEST_F(FastVerdict, AfterAStepThatCouldNotBeCapturedRandomOperationsStillWork) {
    REQUIRE_CUDA();
    // CUDA refuses the capture; the eager steps after it draw dropout masks, and so
    // does the process afterwards: the generator must have left capture mode.
    const config::ExperimentSpec spec = syncingSpec(syncingModel(file("syncing-dropout.pt"), true));
    Events seen;
    run::CancelToken cancel;
    const auto out = train::trainRun(spec, 0, 1, seen, cancel, {});
    ASSERT_EQ(out.status, run::RunStatus::Finished) << out.error;
    EXPECT_EQ(seen.steps, 20);
    EXPECT_NO_THROW(at::randn({64}, at::TensorOptions().device(at::kCUDA)).sum().item<float>());
}
