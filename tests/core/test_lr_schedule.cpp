// LR schedules: each shape at its landmarks, PyTorch's OneCycleLR, and the same
// curve over samples for an arm with accumulation.
#include <gtest/gtest.h>

#include <cmath>

#include "core/config/LrSchedule.h"
#include "core/config/Presets.h"
#include "core/config/Validation.h"

using namespace ampbench::config;

namespace {

OptimizerSpec with(LrSchedule s, double warmup = 0.0) {
    OptimizerSpec o;
    o.schedule = s;
    o.warmup_fraction = warmup;
    return o;
}

}  // namespace

TEST(LrSchedule, ConstantAndLinearWarmup) {
    EXPECT_EQ(scheduledLr(with(LrSchedule::Constant), 0.1, 57, 100), 0.1);
    const auto o = with(LrSchedule::Warmup, 0.1);  // 10 of 100 steps
    EXPECT_DOUBLE_EQ(scheduledLr(o, 0.1, 0, 100), 0.01);
    EXPECT_DOUBLE_EQ(scheduledLr(o, 0.1, 4, 100), 0.05);
    EXPECT_DOUBLE_EQ(scheduledLr(o, 0.1, 9, 100), 0.1);
    EXPECT_DOUBLE_EQ(scheduledLr(o, 0.1, 99, 100), 0.1);
}

TEST(LrSchedule, CosineAfterWarmupEndsAtTheFloor) {
    auto o = with(LrSchedule::Cosine, 0.1);
    o.min_lr_fraction = 0.01;
    EXPECT_DOUBLE_EQ(scheduledLr(o, 0.2, 10, 100), 0.2) << "the top right after the warm-up";
    EXPECT_NEAR(scheduledLr(o, 0.2, 99, 100), 0.002, 1e-12) << "the floor at the last step";
    const double mid = scheduledLr(o, 0.2, 10 + 89 / 2, 100);
    EXPECT_NEAR(mid, (0.2 + 0.002) / 2, 0.002) << "half way down at the middle";
    for (int64_t t = 11; t < 100; ++t) {
        EXPECT_LE(scheduledLr(o, 0.2, t, 100), scheduledLr(o, 0.2, t - 1, 100)) << t;
    }
}

TEST(LrSchedule, StepMultipliesByGammaAtEachFraction) {
    auto o = with(LrSchedule::Step);
    o.step_fraction = 0.3;
    o.gamma = 0.1;
    EXPECT_DOUBLE_EQ(scheduledLr(o, 1.0, 29, 100), 1.0);
    EXPECT_DOUBLE_EQ(scheduledLr(o, 1.0, 30, 100), 0.1);
    EXPECT_NEAR(scheduledLr(o, 1.0, 60, 100), 0.01, 1e-15);
    EXPECT_NEAR(scheduledLr(o, 1.0, 99, 100), 0.001, 1e-15);
}

TEST(LrSchedule, OneCycleIsPyTorchsOneCycleLR) {
    // OneCycleLR(max_lr=0.1, total_steps=100, pct_start=0.3, anneal_strategy="cos",
    // div_factor=25, final_div_factor=1e4): the peak at step 29, the floor at step 99.
    const auto o = with(LrSchedule::OneCycle, 0.3);
    EXPECT_DOUBLE_EQ(scheduledLr(o, 0.1, 0, 100), 0.004);
    EXPECT_DOUBLE_EQ(scheduledLr(o, 0.1, 29, 100), 0.1);
    EXPECT_NEAR(scheduledLr(o, 0.1, 99, 100), 0.004 / 1e4, 1e-15);
    // PyTorch's value at step 10: the cosine rise 10/29 of the way.
    const double pct = 10.0 / 29.0;
    EXPECT_NEAR(scheduledLr(o, 0.1, 10, 100), 0.1 + (0.004 - 0.1) / 2 * (1 + std::cos(M_PI * pct)),
                1e-15);
    EXPECT_DOUBLE_EQ(scheduledLr(with(LrSchedule::OneCycle), 0.1, 29, 100), 0.1)
        << "pct_start 0.3 when the warm-up fraction is 0";
}

// An arm with accumulation 4 makes a quarter of the optimizer steps: at the same
// samples seen its lr is the baseline's.
TEST(LrSchedule, AccumulationFollowsTheSameCurveOverSamples) {
    auto o = with(LrSchedule::Cosine, 0.05);
    const int64_t steps = 400, k = 4;
    for (int64_t t = 0; t < steps / k; ++t) {
        const int64_t base_step = (t + 1) * k - 1;  // the baseline step ending at the same sample
        EXPECT_NEAR(scheduledLr(o, 0.1, t, steps / k), scheduledLr(o, 0.1, base_step, steps),
                    0.1 * 0.05)
            << t;
    }
}

// A captured step reads its learning rate from the device, so a graph arm takes any
// schedule, and accumulation (a micro-step graph and an update graph); several ranks
// (the all-reduce is not captured) are still refused, by name.
TEST(LrSchedule, ACapturedStepTakesAnyScheduleAndAccumulationButNotRanks) {
    auto s = *preset("default");
    s.arms[0].cuda_graph = true;
    EXPECT_TRUE(validate(s).empty());
    for (auto schedule :
         {LrSchedule::Cosine, LrSchedule::OneCycle, LrSchedule::Warmup, LrSchedule::Step}) {
        s.optimizer.schedule = schedule;
        EXPECT_TRUE(validate(s).empty()) << toString(schedule);
    }
    s.arms[0].accumulation = 4;
    EXPECT_TRUE(validate(s).empty());
    s.arms[0].ranks = 2;
    bool named = false;
    for (const auto& e : validate(s)) {
        named = named ||
                (e.field == "arms[0].cuda_graph" && e.message.find("ranks 1") != std::string::npos);
    }
    EXPECT_TRUE(named);
    s = *preset("default");
    s.optimizer.nesterov = true;
    s.optimizer.momentum = 0;
    EXPECT_FALSE(validate(s).empty());
    s = *preset("default");
    s.data.name = "synthetic-images";
    s.data.evaluate_on = "test";
    EXPECT_FALSE(validate(s).empty());
}
