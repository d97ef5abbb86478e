// The training loop: accumulation equivalence, cancel, failures, records.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "core/config/Presets.h"
#include "core/data/FashionMnist.h"
#include "core/train/Trainer.h"

using namespace ampbench;

namespace {

bool haveData() {
    return std::filesystem::exists(data::defaultFashionMnistDir() + "/train-images-idx3-ubyte.gz");
}

struct Collect : train::TrainObserver {
    std::vector<train::StepRecord> steps;
    std::vector<train::EvalRecord> evals;
    std::vector<train::EventRecord> events;
    train::RunInfo info;
    train::RunOutcome outcome;
    bool finished = false;
    train::CancelToken* cancel_at_step_token = nullptr;
    int64_t cancel_at_step = -1;
    void onStart(const train::RunInfo& i) override { info = i; }
    void onStep(const train::StepRecord& s) override {
        steps.push_back(s);
        if (cancel_at_step_token && s.step == cancel_at_step) {
            cancel_at_step_token->cancel();
        }
    }
    void onEval(const train::EvalRecord& e) override { evals.push_back(e); }
    void onEvent(const train::EventRecord& e) override { events.push_back(e); }
    void onFinish(const train::RunOutcome& o) override {
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

}  // namespace

// K micro-batches of b, loss/K, one step == one step on the K·b batch.
TEST(Trainer, AccumulationMatchesTheLargeBatch) {
    if (!haveData()) {
        GTEST_SKIP() << "dataset-fashion-mnist is not installed";
    }
    const int b = 16, k = 4;
    auto big = mlpSpec();
    big.micro_batch = b * k;
    big.steps = 3;
    big.arms = {{"big"}};
    big.arms[0].lr_rule = config::LrRule::None;
    auto acc = mlpSpec();
    acc.micro_batch = b;
    acc.steps = 3 * k;
    acc.arms = {{"acc"}};
    acc.arms[0].accumulation = k;
    acc.arms[0].lr_rule = config::LrRule::None;

    std::vector<double> p_big, p_acc;
    train::CancelToken cancel;
    Collect c1, c2;
    train::TrainOptions o1, o2;
    o1.parameters_out = &p_big;
    o2.parameters_out = &p_acc;
    auto r1 = train::trainRun(big, 0, 5, c1, cancel, o1);
    auto r2 = train::trainRun(acc, 0, 5, c2, cancel, o2);
    ASSERT_EQ(r1.status, train::RunStatus::Finished) << r1.error;
    ASSERT_EQ(r2.status, train::RunStatus::Finished) << r2.error;
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
    s.steps = 30;
    s.eval_interval = 10;
    s.warmup_steps = 2;
    s.arms = {{"bf16", config::Precision::AmpBf16}};
    Collect c;
    train::CancelToken cancel;
    auto r = train::trainRun(s, 0, 1, c, cancel);
    ASSERT_EQ(r.status, train::RunStatus::Finished) << r.error;
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

TEST(Trainer, CancelKeepsCompletedSteps) {
    if (!haveData()) {
        GTEST_SKIP() << "dataset-fashion-mnist is not installed";
    }
    auto s = mlpSpec();
    s.steps = 1000;
    s.arms = {{"fp32"}};
    train::CancelToken cancel;
    Collect c;
    c.cancel_at_step_token = &cancel;
    c.cancel_at_step = 7;
    train::TrainOptions o;
    o.flush_every = 1;
    auto r = train::trainRun(s, 0, 1, c, cancel, o);
    EXPECT_EQ(r.status, train::RunStatus::Cancelled);
    EXPECT_EQ(r.steps_done, 7) << "the step in flight when cancel came completes";
    EXPECT_EQ(c.steps.size(), 7u);
}

TEST(Trainer, CancelInsideAccumulationDropsThePartialStep) {
    if (!haveData()) {
        GTEST_SKIP() << "dataset-fashion-mnist is not installed";
    }
    auto s = mlpSpec();
    s.steps = 400;
    s.arms = {{"acc"}};
    s.arms[0].accumulation = 4;
    train::CancelToken cancel;
    Collect c;
    train::TrainOptions o;
    o.flush_every = 1;
    // Cancel before micro-batch 10 (the second of step 3).
    o.before_micro_batch = [&](int64_t n) {
        if (n == 10) {
            cancel.cancel();
        }
    };
    auto r = train::trainRun(s, 0, 1, c, cancel, o);
    EXPECT_EQ(r.status, train::RunStatus::Cancelled);
    EXPECT_EQ(r.steps_done, 2) << "the partial step 3 (micro-batch 9) is dropped";
    EXPECT_EQ(c.steps.size(), 2u);
}

TEST(Trainer, UnsupportedPrecisionFailsWithAClearMessage) {
    auto s = mlpSpec();
    s.data.name = "synthetic-images";
    s.data.channels = 1;
    s.data.height = s.data.width = 8;
    s.device = config::DeviceKind::Cpu;
    s.steps = 2;
    s.arms = {{"fp16", config::Precision::AmpFp16}};
    if (train::resolveDevice(config::DeviceKind::Auto) != "cpu") {
        GTEST_SKIP() << "CPU-only check";
    }
    Collect c;
    train::CancelToken cancel;
    auto r = train::trainRun(s, 0, 1, c, cancel);
#if TORCH_VERSION_MAJOR >= 2
    EXPECT_EQ(r.status, train::RunStatus::Finished) << r.error;
#else
    EXPECT_EQ(r.status, train::RunStatus::Failed);
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
    s.steps = 4;
    s.optimizer.kind = config::OptimizerKind::AdamW;
    s.optimizer.lr = 1e-3;
    s.arms = {{"bf16", config::Precision::AmpBf16, 2}};
    Collect c;
    train::CancelToken cancel;
    auto r = train::trainRun(s, 0, 1, c, cancel);
    ASSERT_EQ(r.status, train::RunStatus::Finished) << r.error;
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
    s.steps = 2;
    s.arms = {{"cl", config::Precision::Fp32}};
    s.arms[0].channels_last = true;
    Collect c;
    train::CancelToken cancel;
    auto r = train::trainRun(s, 0, 1, c, cancel);
    ASSERT_EQ(r.status, train::RunStatus::Finished) << r.error;
    EXPECT_EQ(c.steps.size(), 2u);
}

TEST(Trainer, PlannedSteps) {
    auto s = mlpSpec();
    s.steps = 600;
    config::ArmSpec a;
    a.accumulation = 4;
    EXPECT_EQ(train::plannedOptimizerSteps(s, a, 54000), 150);
    s.epochs = 1;
    s.micro_batch = 64;
    EXPECT_EQ(train::plannedOptimizerSteps(s, a, 54000), 843 / 4);
}

TEST(Trainer, CudaGraphWithoutCudaFailsClearly) {
    if (train::resolveDevice(config::DeviceKind::Auto) != "cpu") {
        GTEST_SKIP() << "CPU-only check";
    }
    auto s = mlpSpec();
    s.data.name = "synthetic-images";
    s.data.channels = 1;
    s.data.height = s.data.width = 8;
    s.steps = 2;
    s.arms = {{"g"}};
    s.arms[0].cuda_graph = true;
    Collect c;
    train::CancelToken cancel;
    auto r = train::trainRun(s, 0, 1, c, cancel);
    EXPECT_EQ(r.status, train::RunStatus::Failed);
    EXPECT_NE(r.error.find("cuda_graph needs a CUDA device"), std::string::npos) << r.error;
}

// The gradient norm is computed two ways: at the step when clipping needs it, and
// deferred to the batched read-back otherwise. A clip far above the norm changes
// nothing in training, so both runs must record the same norm at every step.
TEST(Trainer, DeferredGradientNormEqualsTheNormAtTheStep) {
    if (!haveData()) {
        GTEST_SKIP() << "dataset-fashion-mnist is not installed";
    }
    auto s = mlpSpec();
    s.steps = 23;  // a flush of 20 steps, then a partial one of 3
    s.arms = {{"fp32", config::Precision::Fp32}};
    Collect deferred, at_step;
    train::CancelToken cancel;
    ASSERT_EQ(train::trainRun(s, 0, 1, deferred, cancel).status, train::RunStatus::Finished);
    s.arms[0].grad_clip = 1e9;
    ASSERT_EQ(train::trainRun(s, 0, 1, at_step, cancel).status, train::RunStatus::Finished);
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
