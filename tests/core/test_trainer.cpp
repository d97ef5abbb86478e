// The training loop: accumulation equivalence, cancel, failures, records.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <memory>
#include <thread>
#include <utility>
#include <vector>

#include "core/config/LrSchedule.h"
#include "core/config/PlannedArm.h"
#include "core/config/Presets.h"
#include "core/data/FashionMnist.h"
#include "core/store/Database.h"
#include "core/train/Experiment.h"
#include "core/train/Trainer.h"
#include "tests/core/ScratchDir.h"

using namespace ampbench;

namespace {

bool haveData() {
    return std::filesystem::exists(data::defaultFashionMnistDir() + "/train-images-idx3-ubyte.gz");
}

struct Collect : run::TrainObserver {
    std::vector<run::StepRecord> steps;
    std::vector<run::EvalRecord> evals;
    std::vector<run::EventRecord> events;
    run::RunInfo info;
    run::RunOutcome outcome;
    bool finished = false;
    run::CancelToken* cancel_at_step_token = nullptr;
    int64_t cancel_at_step = -1;
    void onStart(const run::RunInfo& i) override { info = i; }
    void onStep(const run::StepRecord& s) override {
        steps.push_back(s);
        if (cancel_at_step_token && s.step == cancel_at_step) {
            cancel_at_step_token->cancel();
        }
    }
    void onEval(const run::EvalRecord& e) override { evals.push_back(e); }
    void onEvent(const run::EventRecord& e) override { events.push_back(e); }
    void onFinish(const run::RunOutcome& o) override {
        outcome = o;
        finished = true;
    }
};

config::ExperimentSpec mlpSpec() {
    config::ExperimentSpec s;
    s.name = "t";
    s.model.name = "mlp";
    s.model.width = 32;
    s.model.depth = 1;
    s.optimizer.lr = 0.05;
    s.optimizer.momentum = 0.9;
    s.eval_interval = 0;
    s.eval_batches = 1;
    s.warmup_steps = 0;
    s.cpu_threads = 1;
    s.data.prefetch = 2;
    return s;
}

/// The MLP on generated 8×8 images (no dataset needed), one arm of `precision`.
config::ExperimentSpec syntheticSpec(int64_t steps, const char* arm = "fp32",
                                     config::Precision precision = config::Precision::Fp32) {
    auto s = mlpSpec();
    s.data.name = "synthetic-images";
    s.data.channels = 1;
    s.data.height = s.data.width = 8;
    s.micro_steps = steps;
    s.arms = {{arm, precision}};
    return s;
}

}  // namespace

// K micro-batches of b, loss/K, one step == one step on the K·b batch.
TEST(Trainer, AccumulationMatchesTheLargeBatch) {
    if (!haveData()) {
        GTEST_SKIP() << "dataset-fashion-mnist is not installed";
    }
    const int b = 16, k = 4;
    auto big = mlpSpec();
    big.micro_batch = b * k;
    big.micro_steps = 3;
    big.arms = {{"big"}};
    big.arms[0].lr_rule = config::LrRule::None;
    auto acc = mlpSpec();
    acc.micro_batch = b;
    acc.micro_steps = 3 * k;
    acc.arms = {{"acc"}};
    acc.arms[0].accumulation = k;
    acc.arms[0].lr_rule = config::LrRule::None;

    std::vector<double> p_big, p_acc;
    run::CancelToken cancel;
    Collect c1, c2;
    train::TrainOptions o1, o2;
    o1.parameters_out = &p_big;
    o2.parameters_out = &p_acc;
    auto r1 = train::trainRun(big, 0, 5, c1, cancel, o1);
    auto r2 = train::trainRun(acc, 0, 5, c2, cancel, o2);
    ASSERT_EQ(r1.status, run::RunStatus::Finished) << r1.error;
    ASSERT_EQ(r2.status, run::RunStatus::Finished) << r2.error;
    EXPECT_EQ(r1.steps_done, 3);
    EXPECT_EQ(r2.steps_done, 3);
    ASSERT_EQ(p_big.size(), p_acc.size());
    ASSERT_FALSE(p_big.empty());
    double max_diff = 0;
    for (size_t i = 0; i < p_big.size(); ++i) {
        max_diff = std::max(max_diff, std::abs(p_big[i] - p_acc[i]));
    }
    EXPECT_LT(max_diff, 1e-5);
    // Same samples seen, same step count, same losses per optimizer step.
    ASSERT_EQ(c1.steps.size(), c2.steps.size());
    for (size_t i = 0; i < c1.steps.size(); ++i) {
        EXPECT_EQ(c1.steps[i].samples, c2.steps[i].samples);
        EXPECT_NEAR(c1.steps[i].loss, c2.steps[i].loss, 1e-5);
    }
}

TEST(Trainer, RecordsEveryStepAndEval) {
    if (!haveData()) {
        GTEST_SKIP() << "dataset-fashion-mnist is not installed";
    }
    auto s = mlpSpec();
    s.micro_steps = 30;
    s.eval_interval = 10;
    s.warmup_steps = 2;
    s.arms = {{"bf16", config::Precision::AmpBf16}};
    Collect c;
    run::CancelToken cancel;
    train::TrainOptions o;
    o.grad_norm_limit = 0;  // every step, whatever the norm costs
    auto r = train::trainRun(s, 0, 1, c, cancel, o);
    ASSERT_EQ(r.status, run::RunStatus::Finished) << r.error;
    ASSERT_EQ(c.steps.size(), 30u);
    EXPECT_EQ(c.evals.size(), 3u);
    EXPECT_EQ(c.info.precision, "amp-bf16");
    for (size_t i = 0; i < c.steps.size(); ++i) {
        const auto& st = c.steps[i];
        EXPECT_EQ(st.step, static_cast<int64_t>(i + 1));
        EXPECT_EQ(st.samples, st.step * s.micro_batch);
        EXPECT_TRUE(std::isfinite(st.loss));
        EXPECT_GT(st.grad_norm, 0);
        EXPECT_GT(st.step_ms, 0);
        EXPECT_GT(st.mem_peak, 0);
        EXPECT_EQ(st.timed, st.step > 2);
        EXPECT_DOUBLE_EQ(st.loss_scale, 1.0) << "bf16 needs no loss scaling";
    }
    EXPECT_GT(c.evals.back().val_accuracy, 0.3);
    EXPECT_TRUE(c.finished);
}

// A CPU run's memory is what its own tensors hold (the batches its loader prepares
// included), not the process's resident set: memory the process holds elsewhere (a
// desktop's, another thread's) leaves the figure as it was. With the resident set, the
// same arm read 490 MiB in one session and 617 MiB in a later one.
TEST(Trainer, ACpuRunsMemoryIsItsOwnTensorsNotTheProcesss) {
    if (!haveData()) {
        GTEST_SKIP() << "dataset-fashion-mnist is not installed";
    }
    auto s = mlpSpec();
    s.micro_steps = 12;
    s.micro_batch = 64;
    s.arms = {{"fp32", config::Precision::Fp32}};
    run::CancelToken cancel;
    auto peakOf = [&](Collect& c) {
        auto r = train::trainRun(s, 0, 1, c, cancel);
        EXPECT_EQ(r.status, run::RunStatus::Finished) << r.error;
        int64_t peak = 0;
        for (const auto& st : c.steps) {
            peak = std::max(peak, st.mem_peak);
            EXPECT_LE(st.mem_allocated, st.mem_peak);
        }
        return peak;
    };
    Collect alone;
    const int64_t before = peakOf(alone);
    EXPECT_NE(alone.info.env_json.find("\"memory\":\"tensors\""), std::string::npos)
        << alone.info.env_json;
    // The MLP's weights, gradients and momentum (784·32 + 32·10 + biases, float) and a
    // batch of 64 images: more than that, and far less than the process holds.
    const int64_t weights = (784 * 32 + 32 + 32 * 10 + 10) * 4;
    EXPECT_GT(before, 3 * weights);
    EXPECT_LT(before, 16 << 20) << "the run's tensors, not the process's resident set";

    // 256 MiB held by another thread of the process while the same run trains again.
    at::Tensor elsewhere;
    std::thread([&] { elsewhere = at::ones({64 << 20}, at::kFloat); }).join();
    std::vector<char> heap(64 << 20, 1);
    Collect beside;
    const int64_t after = peakOf(beside);
    EXPECT_NEAR(static_cast<double>(after), static_cast<double>(before), 0.02 * before);
    EXPECT_GT(elsewhere.sum().item<double>() + heap[12345], 0);  // both held until here
}

TEST(Trainer, CancelKeepsCompletedSteps) {
    if (!haveData()) {
        GTEST_SKIP() << "dataset-fashion-mnist is not installed";
    }
    auto s = mlpSpec();
    s.micro_steps = 1000;
    s.arms = {{"fp32"}};
    run::CancelToken cancel;
    Collect c;
    c.cancel_at_step_token = &cancel;
    c.cancel_at_step = 7;
    train::TrainOptions o;
    o.flush_every = 1;
    o.flush_min_interval_ms = 0;
    auto r = train::trainRun(s, 0, 1, c, cancel, o);
    EXPECT_EQ(r.status, run::RunStatus::Cancelled);
    EXPECT_EQ(r.failure, run::FailureKind::Cancelled);
    EXPECT_EQ(r.steps_done, 7) << "the step in flight when cancel came completes";
    EXPECT_EQ(c.steps.size(), 7u);
}

TEST(Trainer, CancelInsideAccumulationDropsThePartialStep) {
    if (!haveData()) {
        GTEST_SKIP() << "dataset-fashion-mnist is not installed";
    }
    auto s = mlpSpec();
    s.micro_steps = 400;
    s.arms = {{"acc"}};
    s.arms[0].accumulation = 4;
    run::CancelToken cancel;
    Collect c;
    train::TrainOptions o;
    o.flush_every = 1;
    o.flush_min_interval_ms = 0;
    // Cancel before micro-batch 10 (the second of step 3).
    o.before_micro_batch = [&](int64_t n) {
        if (n == 10) {
            cancel.cancel();
        }
    };
    auto r = train::trainRun(s, 0, 1, c, cancel, o);
    EXPECT_EQ(r.status, run::RunStatus::Cancelled);
    EXPECT_EQ(r.steps_done, 2) << "the partial step 3 (micro-batch 9) is dropped";
    EXPECT_EQ(c.steps.size(), 2u);
}

TEST(Trainer, UnsupportedPrecisionFailsWithAClearMessage) {
    auto s = syntheticSpec(2, "fp16", config::Precision::AmpFp16);
    s.device = config::DeviceKind::Cpu;
    if (train::resolveDevice(config::DeviceKind::Auto) != "cpu") {
        GTEST_SKIP() << "CPU-only check";
    }
    Collect c;
    run::CancelToken cancel;
    auto r = train::trainRun(s, 0, 1, c, cancel);
#if TORCH_VERSION_MAJOR >= 2
    EXPECT_EQ(r.status, run::RunStatus::Finished) << r.error;
#else
    EXPECT_EQ(r.status, run::RunStatus::Failed);
    EXPECT_EQ(r.failure, run::FailureKind::Setup);
    EXPECT_NE(r.error.find("amp-bf16"), std::string::npos) << r.error;
    EXPECT_TRUE(c.finished);
#endif
}

TEST(Trainer, SyntheticTransformerTrains) {
    auto s = mlpSpec();
    s.model.name = "transformer";
    s.model.width = 32;
    s.model.depth = 2;
    s.model.heads = 4;
    s.data.name = "synthetic-tokens";
    s.data.seq_len = 16;
    s.data.vocab = 64;
    s.micro_batch = 4;
    s.micro_steps = 4;
    s.optimizer.kind = config::OptimizerKind::AdamW;
    s.optimizer.lr = 1e-3;
    s.arms = {{"bf16", config::Precision::AmpBf16, 2}};
    Collect c;
    run::CancelToken cancel;
    auto r = train::trainRun(s, 0, 1, c, cancel);
    ASSERT_EQ(r.status, run::RunStatus::Finished) << r.error;
    EXPECT_EQ(c.steps.size(), 2u);
    EXPECT_NEAR(c.steps[0].loss, std::log(64.0), 0.5) << "random tokens: loss ≈ ln(vocab)";
    ASSERT_EQ(c.evals.size(), 1u);
}

TEST(Trainer, ResNetWithChannelsLastTrains) {
    auto s = mlpSpec();
    s.model.name = "resnet";
    s.model.width = 8;
    s.model.blocks = {1, 1};
    s.data.name = "synthetic-images";
    s.data.channels = 3;
    s.data.height = s.data.width = 16;
    s.micro_batch = 4;
    s.micro_steps = 2;
    s.arms = {{"cl", config::Precision::Fp32}};
    s.arms[0].channels_last = true;
    Collect c;
    run::CancelToken cancel;
    auto r = train::trainRun(s, 0, 1, c, cancel);
    ASSERT_EQ(r.status, run::RunStatus::Finished) << r.error;
    EXPECT_EQ(c.steps.size(), 2u);
}

TEST(Trainer, PlannedSteps) {
    auto s = mlpSpec();
    s.micro_steps = 600;
    config::ArmSpec a;
    a.accumulation = 4;
    EXPECT_EQ(train::plannedOptimizerSteps(s, a, 54000), 150);
    s.epochs = 1;
    s.micro_batch = 64;
    EXPECT_EQ(train::plannedOptimizerSteps(s, a, 54000), 843 / 4);
}

// The trainer trains the plan as given: the precision, the learning rate and the
// device planning resolved, none of them worked out again from the spec.
TEST(Trainer, TrainsThePlanAsGivenNotTheSpecAgain) {
    const auto spec = syntheticSpec(6);
    train::RunPlan plan = train::planRun(spec, 0, 1, train::chooseDevice(spec.device));
    EXPECT_EQ(plan.planned.precision, config::Precision::Fp32);
    EXPECT_DOUBLE_EQ(plan.planned.lr, spec.optimizer.lr);
    plan.planned.lr = 0.0125;                             // not what the arm's rule gives
    plan.planned.precision = config::Precision::AmpBf16;  // not what the arm says
    Collect c;
    run::CancelToken cancel;
    const auto out = train::trainRun(spec, plan, c, cancel);
    ASSERT_EQ(out.status, run::RunStatus::Finished) << out.error;
    ASSERT_FALSE(c.steps.empty());
    for (const auto& step : c.steps) {
        EXPECT_DOUBLE_EQ(step.lr, 0.0125) << step.step;
    }
    bool said = false;
    for (const auto& e : c.events) {
        said = said || e.message == "precision 'fp32' runs as amp-bf16 on cpu";
    }
    EXPECT_TRUE(said) << "the run says what it trains as";
}

// A device planning found missing fails every run with planning's words, before the
// run touches the device; nothing resolves the device again.
TEST(Trainer, ADeviceThePlanFoundMissingFailsTheRunWithItsWords) {
    const auto spec = syntheticSpec(4);
    train::DeviceChoice missing;
    missing.placement = config::Placement::cuda();
    missing.problem = "device 'cuda' was asked for but no CUDA device is visible";
    Collect c;
    run::CancelToken cancel;
    const auto out = train::trainRun(spec, train::planRun(spec, 0, 1, missing), c, cancel);
    EXPECT_EQ(out.status, run::RunStatus::Failed);
    EXPECT_EQ(out.error, missing.problem);
    EXPECT_TRUE(c.steps.empty());
    EXPECT_TRUE(c.finished);
}

TEST(Trainer, CudaGraphWithoutCudaFailsClearly) {
    if (train::resolveDevice(config::DeviceKind::Auto) != "cpu") {
        GTEST_SKIP() << "CPU-only check";
    }
    auto s = syntheticSpec(2, "g");
    s.arms[0].cuda_graph = true;
    Collect c;
    run::CancelToken cancel;
    auto r = train::trainRun(s, 0, 1, c, cancel);
    EXPECT_EQ(r.status, run::RunStatus::Failed);
    EXPECT_EQ(r.failure, run::FailureKind::Setup);
    EXPECT_NE(r.error.find("cuda_graph needs a CUDA device"), std::string::npos) << r.error;
}

// Why a run failed is data: a huge learning rate makes the loss NaN, and the
// outcome says NonFinite without anyone reading the message.
TEST(Trainer, ALossThatBecomesNaNFailsAsNonFinite) {
    auto s = syntheticSpec(40, "hot");
    s.optimizer.lr = 1e12;  // far past what validation allows: trainRun does not validate
    s.optimizer.momentum = 0.9;
    Collect c;
    run::CancelToken cancel;
    train::TrainOptions o;
    o.flush_every = 1;
    o.flush_min_interval_ms = 0;
    auto r = train::trainRun(s, 0, 1, c, cancel, o);
    EXPECT_EQ(r.status, run::RunStatus::Failed);
    EXPECT_EQ(r.failure, run::FailureKind::NonFinite) << r.error;
}

TEST(Trainer, MissingDataFailsAsData) {
    auto s = mlpSpec();
    s.arms = {{"fp32"}};
    s.data.dir = "/nonexistent/fashion-mnist";
    Collect c;
    run::CancelToken cancel;
    auto r = train::trainRun(s, 0, 1, c, cancel);
    EXPECT_EQ(r.status, run::RunStatus::Failed);
    EXPECT_EQ(r.failure, run::FailureKind::Data) << r.error;
}

// The gradient norm is computed two ways: at the step when clipping needs it, and
// deferred to the batched read-back otherwise. A clip far above the norm changes
// nothing in training, so both runs must record the same norm at every step.
TEST(Trainer, DeferredGradientNormEqualsTheNormAtTheStep) {
    if (!haveData()) {
        GTEST_SKIP() << "dataset-fashion-mnist is not installed";
    }
    auto s = mlpSpec();
    s.micro_steps = 23;  // a flush of 20 steps, then a partial one of 3
    s.arms = {{"fp32", config::Precision::Fp32}};
    Collect deferred, at_step;
    run::CancelToken cancel;
    train::TrainOptions o;
    o.flush_min_interval_ms = 0;
    o.grad_norm_limit = 0;  // every step
    ASSERT_EQ(train::trainRun(s, 0, 1, deferred, cancel, o).status, run::RunStatus::Finished);
    s.arms[0].grad_clip = 1e9;
    ASSERT_EQ(train::trainRun(s, 0, 1, at_step, cancel, o).status, run::RunStatus::Finished);
    ASSERT_EQ(deferred.steps.size(), 23u);
    ASSERT_EQ(at_step.steps.size(), 23u);
    for (size_t i = 0; i < deferred.steps.size(); ++i) {
        EXPECT_GT(deferred.steps[i].grad_norm, 0) << "step " << i + 1;
        EXPECT_NEAR(deferred.steps[i].grad_norm, at_step.steps[i].grad_norm,
                    1e-5 * at_step.steps[i].grad_norm)
            << "step " << i + 1;
        EXPECT_NEAR(deferred.steps[i].loss, at_step.steps[i].loss, 1e-6) << "step " << i + 1;
    }
}

TEST(Trainer, RecordingCostCountsTheObserverAndStaysWithinTheRun) {
    // The recording's direct cost is what the overhead benchmark reports on the GPU:
    // an observer that takes 2 ms per step must show up in its observer part, and
    // the total can never exceed the run's own wall time.
    struct Slow : Collect {
        void onStep(const run::StepRecord& s) override {
            Collect::onStep(s);
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
        }
    };
    auto s = syntheticSpec(12);
    run::CancelToken cancel;
    Slow slow;
    train::RecordingCost cost;
    train::TrainOptions o;
    o.recording_cost = &cost;
    auto r = train::trainRun(s, 0, 1, slow, cancel, o);
    ASSERT_EQ(r.status, run::RunStatus::Finished) << r.error;
    EXPECT_GE(cost.observer_ms, 12 * 2.0);
    EXPECT_LT(cost.total(), r.wall_s * 1000.0);
    EXPECT_GT(cost.timers_ms, 0.0);
    EXPECT_GT(cost.memory_ms, 0.0);
    EXPECT_GT(cost.grad_norm_ms, 0.0);
    EXPECT_GT(cost.readback_ms, 0.0);

    Collect quick;
    train::RecordingCost quick_cost;
    o.recording_cost = &quick_cost;
    r = train::trainRun(s, 0, 1, quick, cancel, o);
    ASSERT_EQ(r.status, run::RunStatus::Finished) << r.error;
    EXPECT_LT(quick_cost.observer_ms, 12 * 1.0) << "a quick observer costs far less";

    // Without instrumentation only the read-back and the observer remain.
    train::RecordingCost bare_cost;
    o.recording_cost = &bare_cost;
    o.instrument = false;
    r = train::trainRun(s, 0, 1, quick, cancel, o);
    ASSERT_EQ(r.status, run::RunStatus::Finished) << r.error;
    EXPECT_EQ(bare_cost.timers_ms, 0.0);
    EXPECT_EQ(bare_cost.memory_ms, 0.0);
    EXPECT_EQ(bare_cost.grad_norm_ms, 0.0);
}

TEST(Trainer, CostlyGradientNormIsRecordedEveryKthStepAndSaysSo) {
    // A budget no norm can meet: after the probe steps the norm is thinned out,
    // an Info event gives k, and exactly the steps 1, 1 + k, ... carry a norm.
    auto s = syntheticSpec(40);
    run::CancelToken cancel;
    Collect c;
    train::TrainOptions o;
    o.grad_norm_limit = 1e-9;  // no norm meets it
    o.grad_norm_budget = 1e-9;
    auto r = train::trainRun(s, 0, 1, c, cancel, o);
    ASSERT_EQ(r.status, run::RunStatus::Finished) << r.error;
    const run::EventRecord* said = nullptr;
    for (const auto& e : c.events) {
        if (e.message.find("gradient norm recorded every") != std::string::npos) {
            said = &e;
        }
    }
    ASSERT_NE(said, nullptr);
    EXPECT_EQ(said->step, 12);
    const auto k = static_cast<int64_t>(said->value);
    ASSERT_GE(k, 2);
    ASSERT_EQ(c.steps.size(), 40u);
    for (const auto& st : c.steps) {
        const bool expected = st.step < 12 || (st.step - 1) % k == 0;
        EXPECT_EQ(std::isfinite(st.grad_norm), expected) << "step " << st.step;
    }

    // Within budget (0 = no limit) every step has one and nothing is said.
    Collect every;
    o.grad_norm_limit = 0;
    r = train::trainRun(s, 0, 1, every, cancel, o);
    ASSERT_EQ(r.status, run::RunStatus::Finished) << r.error;
    for (const auto& st : every.steps) {
        EXPECT_TRUE(std::isfinite(st.grad_norm)) << "step " << st.step;
    }
    for (const auto& e : every.events) {
        EXPECT_EQ(e.message.find("gradient norm recorded every"), std::string::npos);
    }
}

TEST(Trainer, ReadBackWaitsForTheMinimumInterval) {
    // Millisecond steps are read back in batches: with a minimum interval longer
    // than the run, no step reaches the observer before the end.
    auto s = syntheticSpec(30);
    run::CancelToken cancel;
    Collect c;
    size_t seen_before_last = 1;
    train::TrainOptions o;
    o.flush_every = 1;
    o.flush_min_interval_ms = 1e9;
    o.before_micro_batch = [&](int64_t n) {
        if (n == 30) {
            seen_before_last = c.steps.size();
        }
    };
    auto r = train::trainRun(s, 0, 1, c, cancel, o);
    ASSERT_EQ(r.status, run::RunStatus::Finished) << r.error;
    EXPECT_EQ(seen_before_last, 0u);
    EXPECT_EQ(c.steps.size(), 30u);

    // Without it, every step is read back before the next one starts.
    Collect each;
    o.flush_min_interval_ms = 0;
    o.before_micro_batch = [&](int64_t n) {
        if (n == 30) {
            seen_before_last = each.steps.size();
        }
    };
    r = train::trainRun(s, 0, 1, each, cancel, o);
    ASSERT_EQ(r.status, run::RunStatus::Finished) << r.error;
    EXPECT_EQ(seen_before_last, 29u);
}

// The schedule sets each optimizer step's lr (recorded with the step); evaluation
// can run on the dataset's own test split.
TEST(Trainer, TheScheduleSetsEachStepsLrAndTheTestSplitIsEvaluated) {
    if (!haveData()) {
        GTEST_SKIP() << "dataset-fashion-mnist is not installed";
    }
    auto spec = mlpSpec();
    spec.data.name = "fashion-mnist";
    spec.micro_steps = 24;
    spec.micro_batch = 32;
    spec.eval_interval = 12;
    spec.data.evaluate_on = "test";
    spec.optimizer.schedule = config::LrSchedule::OneCycle;
    spec.optimizer.warmup_fraction = 0.25;
    spec.arms = {{"fp32", config::Precision::Fp32}};
    Collect c;
    run::CancelToken cancel;
    auto out = train::trainRun(spec, 0, 1, c, cancel);
    ASSERT_EQ(out.status, run::RunStatus::Finished) << out.error;
    ASSERT_EQ(c.steps.size(), 24u);
    for (const auto& s : c.steps) {
        EXPECT_DOUBLE_EQ(s.lr, config::scheduledLr(spec.optimizer, 0.05, s.step - 1, 24)) << s.step;
    }
    EXPECT_DOUBLE_EQ(c.steps[5].lr, 0.05) << "the peak after a quarter of the run";
    ASSERT_EQ(c.evals.size(), 2u);
    EXPECT_TRUE(std::isfinite(c.evals.back().val_accuracy));
}

// Deterministic mode: the same spec and seed give the same loss at every step, bit for
// bit (initialisation, data order and dropout included); another seed does not.
TEST(Trainer, DeterministicRunsRepeatEveryLossBitForBit) {
    auto s = syntheticSpec(40);
    s.model.width = 48;
    s.model.dropout = 0.2;
    s.cpu_threads = 2;
    s.deterministic = true;
    auto train = [&](uint64_t seed) {
        Collect c;
        run::CancelToken cancel;
        auto r = train::trainRun(s, 0, seed, c, cancel, {});
        EXPECT_EQ(r.status, run::RunStatus::Finished) << r.error;
        std::vector<double> losses;
        for (const auto& st : c.steps) {
            losses.push_back(st.loss);
        }
        return losses;
    };
    const auto first = train(7);
    const auto again = train(7);
    ASSERT_EQ(first.size(), 40u);
    ASSERT_EQ(again.size(), first.size());
    for (size_t i = 0; i < first.size(); ++i) {
        ASSERT_EQ(std::memcmp(&first[i], &again[i], sizeof(double)), 0)
            << "step " << i + 1 << ": " << first[i] << " vs " << again[i];
    }
    EXPECT_NE(train(8), first) << "another seed trains another way";
}

class Experiment : public test::ScratchDirTest {};

// The workflow validates a plain spec where it starts; an invalid one is refused at
// each entry point that takes one, before anything is written.
TEST_F(Experiment, AnInvalidSpecIsRefusedAtEveryEntryPointAndNothingIsWritten) {
    auto db = store::Database::open(file("e.db"));
    config::ExperimentSpec bad = syntheticSpec(4);
    bad.micro_batch = 0;
    auto refusedFor = [](auto&& call) {
        try {
            call();
        } catch (const train::SpecError& e) {
            return e.errors().empty() ? std::string() : e.errors().front().field;
        }
        return std::string("accepted");
    };
    run::CancelToken cancel;
    EXPECT_EQ(refusedFor([&] { train::planExperiment(*db, bad); }), "micro_batch");
    EXPECT_EQ(refusedFor([&] { train::runExperiment(*db, bad, cancel); }), "micro_batch");
    EXPECT_EQ(refusedFor([&] { train::validSpec(bad); }), "micro_batch");
    EXPECT_TRUE(db->experiments().empty());
}

// A front end that validated the spec itself hands the ValidSpec on: it is planned
// and trained as it is.
// The experiment's device is chosen once and every planned run carries it, with the
// arm as planned: what the run stores is what it trains with.
TEST_F(Experiment, EveryPlannedRunCarriesTheDeviceAndTheArmAsPlanned) {
    auto db = store::Database::open(file("e.db"));
    auto spec = syntheticSpec(4, "amp", config::Precision::Amp);
    spec.arms.push_back({"accum2", config::Precision::Fp32, 2});
    spec.seeds = {1, 2};
    spec.device = config::DeviceKind::Cpu;
    const auto plan = train::planExperiment(*db, spec);
    ASSERT_EQ(plan.runs.size(), 4u);
    EXPECT_FALSE(plan.device.placement.isCuda());
    EXPECT_TRUE(plan.device.problem.empty());
    for (const auto& r : plan.runs) {
        EXPECT_EQ(r.device.placement, plan.device.placement);
        const auto stored = config::plannedArmFromJson(db->run(r.run_id)->spec_json);
        EXPECT_EQ(stored.precision, r.planned.precision) << r.arm;
        EXPECT_DOUBLE_EQ(stored.lr, r.planned.lr) << r.arm;
        EXPECT_EQ(stored.effective_batch, r.planned.effective_batch) << r.arm;
    }
    EXPECT_EQ(plan.runs[0].planned.precision, config::Precision::AmpBf16) << "amp on the CPU";
    EXPECT_DOUBLE_EQ(plan.runs[1].planned.lr, 2 * spec.optimizer.lr) << "the linear rule, K = 2";
}

TEST_F(Experiment, AValidatedSpecIsPlannedAndTrainedAsItIs) {
    auto db = store::Database::open(file("e.db"));
    const config::ValidSpec valid = train::validSpec(syntheticSpec(4));
    run::CancelToken cancel;
    const train::ExperimentResult result = train::runExperiment(*db, valid, cancel);
    ASSERT_EQ(result.plan.runs.size(), 1u);
    EXPECT_FALSE(result.any_failed);
    EXPECT_EQ(train::storedSpec(*db, result.plan.experiment_id), valid.spec());
    EXPECT_EQ(db->run(result.plan.runs.front().run_id)->status, run::RunStatus::Finished);
}

// Each read-back is committed as it arrives: when an evaluation starts (which may take
// minutes on a large validation set), every step before it is in the database, where
// another process sees it and a kill during the evaluation leaves it (before, the
// steps read back within 250 ms of the last commit waited in memory for the next one).
TEST_F(Experiment, EveryStepReadBackIsInTheDatabaseBeforeAnEvaluationStarts) {
    auto db = store::Database::open(file("e.db"));
    config::ExperimentSpec spec = syntheticSpec(40);
    spec.eval_interval = 10;
    struct Watch : run::TrainObserver {
        std::unique_ptr<store::Database> watcher;
        int64_t run_id = 0;
        std::vector<std::pair<int64_t, int64_t>> stored;  ///< (eval step, steps stored then)
        void onEval(const run::EvalRecord& e) override {
            stored.emplace_back(e.step, watcher->stepCount(run_id));
        }
    } watch;
    watch.watcher = store::Database::open(file("e.db"), store::Database::Mode::ReadOnly);
    train::ExperimentHooks hooks;
    hooks.starting = [&](const train::PlannedRun& run) -> run::TrainObserver* {
        watch.run_id = run.run_id;
        return &watch;
    };
    run::CancelToken cancel;
    const auto result = train::runExperiment(*db, spec, cancel, hooks);
    ASSERT_FALSE(result.any_failed);
    const std::vector<std::pair<int64_t, int64_t>> expected = {
        {10, 10}, {20, 20}, {30, 30}, {40, 40}};
    EXPECT_EQ(watch.stored, expected);
}

// A front end may cancel one run alone or take a queued run out: the rest of the
// queue trains, and the experiment is not cancelled.
TEST_F(Experiment, OneRunCancelledAloneOrRemovedFromTheQueueLeavesTheRestToTrain) {
    auto db = store::Database::open(file("e.db"));
    config::ExperimentSpec spec = syntheticSpec(4);
    spec.seeds = {1, 2, 3};
    run::CancelToken cancel;
    run::CancelToken firstAlone;
    firstAlone.cancel();  // the first run stops at its first check
    train::ExperimentHooks hooks;
    std::vector<int64_t> started;
    hooks.run_cancel = [&](const train::PlannedRun& run) -> const run::CancelToken* {
        return run.seed == 1 ? &firstAlone : nullptr;
    };
    hooks.skip = [](const train::PlannedRun& run) { return run.seed == 2; };
    hooks.starting = [&](const train::PlannedRun& run) -> run::TrainObserver* {
        started.push_back(run.run_id);
        return nullptr;
    };
    const train::ExperimentResult result = train::runExperiment(*db, spec, cancel, hooks);
    ASSERT_EQ(result.plan.runs.size(), 3u);
    EXPECT_FALSE(result.cancelled);
    const auto& runs = result.plan.runs;
    EXPECT_EQ(started, (std::vector<int64_t>{runs[0].run_id, runs[2].run_id}));  // not the removed
    EXPECT_EQ(db->run(runs[0].run_id)->status, run::RunStatus::Cancelled);
    EXPECT_EQ(db->run(runs[1].run_id)->status, run::RunStatus::Cancelled);
    EXPECT_EQ(db->run(runs[1].run_id)->error, "removed from the queue before it started");
    EXPECT_EQ(db->run(runs[2].run_id)->status, run::RunStatus::Finished);
}

// The experiment's token still stops everything, a run with its own token included
// once the front end sets both.
TEST_F(Experiment, TheExperimentsCancelStillEndsTheQueueAfterARunWithItsOwnToken) {
    auto db = store::Database::open(file("e.db"));
    config::ExperimentSpec spec = syntheticSpec(4);
    spec.seeds = {1, 2};
    run::CancelToken cancel;
    run::CancelToken own;
    train::ExperimentHooks hooks;
    hooks.run_cancel = [&](const train::PlannedRun&) -> const run::CancelToken* {
        cancel.cancel();  // "cancel everything" sets both
        own.cancel();
        return &own;
    };
    const train::ExperimentResult result = train::runExperiment(*db, spec, cancel, hooks);
    EXPECT_TRUE(result.cancelled);
    EXPECT_EQ(db->run(result.plan.runs[0].run_id)->status, run::RunStatus::Cancelled);
    EXPECT_EQ(db->run(result.plan.runs[1].run_id)->status, run::RunStatus::Cancelled);
    EXPECT_EQ(db->run(result.plan.runs[1].run_id)->error, "cancelled before it started");
}
