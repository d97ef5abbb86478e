// The step recorder on its own: plain CPU tensors stand in for a step's device
// values, so its read-back, deferred norms and events are checked without a model.
#include <gtest/gtest.h>

#include <cmath>

#include "core/probe/MemoryProbe.h"
#include "core/probe/StepTimer.h"
#include "core/train/private/StepRecorder.h"

namespace run = ampbench::run;
namespace train = ampbench::train;
namespace probe = ampbench::probe;

namespace {

struct Collect : run::TrainObserver {
    std::vector<run::StepRecord> steps;
    std::vector<run::EventRecord> events;
    void onStep(const run::StepRecord& s) override { steps.push_back(s); }
    void onEvent(const run::EventRecord& e) override { events.push_back(e); }
};

at::Tensor scalar(double v) {
    return at::full({}, v, at::kFloat);
}

train::PendingStep pending(double loss) {
    train::PendingStep p;
    p.loss = scalar(loss);
    return p;
}

}  // namespace

TEST(StepRecorder, ReadsBackEveryQueuedStepWithItsValues) {
    Collect obs;
    train::TrainOptions opt;
    opt.flush_every = 3;
    opt.flush_min_interval_ms = 0;
    probe::StepTimer timer(c10::Device("cpu"));
    probe::MemoryProbe memory(c10::Device("cpu"));
    train::StepRecorder rec(obs, opt, timer, memory, /*loss_scaling=*/true, /*backoff=*/0.5);
    for (int64_t s = 1; s <= 3; ++s) {
        EXPECT_FALSE(rec.flushDue());
        rec.startStep(s);
        run::StepRecord r;
        r.step = s;
        train::PendingStep p = pending(1.0 / static_cast<double>(s));
        p.scale = scalar(65536.0);
        p.found_inf = scalar(s == 2 ? 1.0 : 0.0);  // step 2 overflowed
        // Step 1's norm at the step; the others deferred as per-gradient parts.
        if (s == 1) {
            p.norm = scalar(5.0);
        } else {
            p.norm_parts = {scalar(3.0), scalar(4.0)};
        }
        rec.completeStep(r, std::move(p), s * 32);
    }
    EXPECT_TRUE(rec.flushDue());
    EXPECT_FALSE(rec.flush()) << "no divergence with loss scaling";
    ASSERT_EQ(obs.steps.size(), 3u);
    EXPECT_EQ(rec.stepsDone(), 3);
    for (size_t i = 0; i < 3; ++i) {
        const auto& st = obs.steps[i];
        EXPECT_EQ(st.step, static_cast<int64_t>(i + 1));
        EXPECT_EQ(st.samples, static_cast<int64_t>(i + 1) * 32);
        EXPECT_NEAR(st.loss, 1.0 / static_cast<double>(i + 1), 1e-6);
        EXPECT_DOUBLE_EQ(st.loss_scale, 65536.0);
        EXPECT_NEAR(st.grad_norm, 5.0, 1e-6) << "global norm of the parts 3 and 4";
        EXPECT_EQ(st.skipped, i == 1);
        EXPECT_GT(st.mem_peak, 0) << "memory sampled at each step";
    }
    ASSERT_EQ(obs.events.size(), 1u);
    EXPECT_EQ(obs.events[0].kind, run::EventKind::SkippedStep);
    EXPECT_EQ(obs.events[0].step, 2);
    EXPECT_DOUBLE_EQ(obs.events[0].value, 32768.0) << "the scale after backoff";
    EXPECT_FALSE(rec.flush()) << "nothing left";
    EXPECT_EQ(obs.steps.size(), 3u);
}

TEST(StepRecorder, ANonFiniteLossWithoutScalingIsTheFirstBadStep) {
    Collect obs;
    train::TrainOptions opt;
    opt.instrument = false;
    probe::StepTimer timer(c10::Device("cpu"));
    probe::MemoryProbe memory(c10::Device("cpu"));
    train::StepRecorder rec(obs, opt, timer, memory, /*loss_scaling=*/false, 0.5);
    for (int64_t s = 1; s <= 4; ++s) {
        run::StepRecord r;
        r.step = s;
        rec.completeStep(r, pending(s >= 3 ? NAN : 1.0), s);
    }
    const auto bad = rec.flush();
    ASSERT_TRUE(bad);
    EXPECT_EQ(*bad, 3);
    EXPECT_EQ(obs.steps.size(), 4u) << "every step is still reported";
    EXPECT_TRUE(std::isnan(obs.steps[0].grad_norm)) << "no norm recorded";
}

TEST(StepRecorder, RecordsItsOwnCostWhenAsked) {
    Collect obs;
    train::RecordingCost cost;
    train::TrainOptions opt;
    opt.recording_cost = &cost;
    probe::StepTimer timer(c10::Device("cpu"));
    probe::MemoryProbe memory(c10::Device("cpu"));
    train::StepRecorder rec(obs, opt, timer, memory, false, 0.5);
    for (int64_t s = 1; s <= 5; ++s) {
        rec.startStep(s);
        run::StepRecord r;
        r.step = s;
        rec.completeStep(r, pending(1.0), s);
    }
    rec.flush();
    EXPECT_GT(rec.cost().total(), 0.0);
    EXPECT_GE(rec.cost().timers_ms, 0.0);
    EXPECT_GT(rec.cost().observer_ms + rec.cost().readback_ms, 0.0);
    EXPECT_TRUE(rec.wantsNorm(1));
    EXPECT_TRUE(rec.probing(2));
    EXPECT_FALSE(rec.probing(12));
}
