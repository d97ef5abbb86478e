// Loss scaler: PyTorch's GradScaler rule, step by step, and the order of
// unscale → clip → step → update in the optimizer step.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/nn/modules/linear.h>

#include <cmath>
#include <limits>

#include "core/amp/LossScaler.h"
#include "core/train/private/OptimizerStep.h"

using ampbench::amp::LossScaler;
using ampbench::config::ScalerSpec;

namespace {

/// What torch.amp.GradScaler does to (scale, tracker) for one step, written out
/// from its documented rule.
struct Reference {
    float scale;
    int tracker;
    void step(bool inf, const ScalerSpec& o) {
        if (inf) {
            scale = static_cast<float>(scale * o.backoff_factor);
            tracker = 0;
        } else if (++tracker == o.growth_interval) {
            float grown = static_cast<float>(scale * o.growth_factor);
            if (std::isfinite(grown)) {
                scale = grown;
            }
            tracker = 0;
        }
    }
};

std::vector<at::Tensor> grads(bool inf) {
    auto a = at::full({3, 4}, 2.0f);
    auto b = at::full({5}, -1.0f);
    if (inf) {
        b[2] = std::numeric_limits<float>::infinity();
    }
    return {a, b};
}

void runSequence(bool force_portable) {
    ScalerSpec o;
    o.init_scale = 1024.0;
    o.growth_interval = 3;
    LossScaler s(o, c10::Device(c10::kCPU), force_portable);
    Reference ref{1024.0f, 0};
    // finite ×3 → grow; inf → back off; finite ×2; inf; inf; finite ×4
    const std::vector<bool> pattern = {false, false, false, true,  false, false,
                                       true,  true,  false, false, false, false};
    for (size_t i = 0; i < pattern.size(); ++i) {
        auto g = grads(pattern[i]);
        double before = s.scaleValue();
        for (auto& t : g) {
            t.mul_(before);  // as if backward ran on the scaled loss
        }
        s.unscale(g);
        ASSERT_EQ(s.foundInf(), pattern[i]) << "step " << i;
        if (!pattern[i]) {
            EXPECT_TRUE(at::allclose(g[0], at::full({3, 4}, 2.0f))) << "unscaled, step " << i;
        }
        s.update();
        ref.step(pattern[i], o);
        EXPECT_FLOAT_EQ(static_cast<float>(s.scaleValue()), ref.scale) << "step " << i;
        EXPECT_EQ(s.growthTracker(), ref.tracker) << "step " << i;
        EXPECT_FALSE(s.foundInf()) << "found_inf is reset by update";
    }
    // The exact trajectory: 1024 → 2048 (growth) → 1024 (inf) → 512 → 256 (two infs) → …
    EXPECT_FLOAT_EQ(static_cast<float>(s.scaleValue()), 512.0f);
}

}  // namespace

TEST(LossScaler, FollowsPyTorchRulePortable) {
    runSequence(/*force_portable=*/true);
}

TEST(LossScaler, FusedKernelsWhereAvailable) {
    if (!ampbench::amp::fusedScalerKernels(c10::Device(c10::kCPU))) {
        GTEST_SKIP() << "this LibTorch has no CPU kernels for the fused AMP ops (1.13)";
    }
    runSequence(/*force_portable=*/false);
}

TEST(LossScaler, DefaultsAreGradScalers) {
    ScalerSpec o;
    EXPECT_EQ(o.init_scale, 65536.0);
    EXPECT_EQ(o.growth_factor, 2.0);
    EXPECT_EQ(o.backoff_factor, 0.5);
    EXPECT_EQ(o.growth_interval, 2000);
}

TEST(LossScaler, NaNCountsAsInf) {
    LossScaler s(ScalerSpec{}, c10::Device(c10::kCPU), true);
    std::vector<at::Tensor> g = {at::full({2}, std::numeric_limits<float>::quiet_NaN())};
    s.unscale(g);
    EXPECT_TRUE(s.foundInf());
    s.update();
    EXPECT_FLOAT_EQ(static_cast<float>(s.scaleValue()), 32768.0f);
}

TEST(LossScaler, NoGrowthPastFloatMax) {
    ScalerSpec o;
    o.init_scale = 3e38;
    o.growth_interval = 1;
    LossScaler s(o, c10::Device(c10::kCPU), true);
    std::vector<at::Tensor> g = {at::ones({2})};
    s.unscale(g);
    s.update();
    EXPECT_FLOAT_EQ(static_cast<float>(s.scaleValue()), 3e38f);
}

// The optimizer step with a scaler and clipping gives the same parameters as the
// plain fp32 step: clipping must see unscaled gradients.
TEST(OptimizerStep, ClippingSeesUnscaledGradients) {
    auto make = [] {
        at::manual_seed(7);
        return torch::nn::Linear(6, 3);
    };
    auto x = at::randn({8, 6});
    auto y = at::randint(3, {8}, at::kLong);
    const double clip = 0.05;  // small enough that clipping is active

    ampbench::config::OptimizerSpec sgd;
    sgd.lr = 0.1;
    sgd.momentum = 0.0;
    const c10::Device cpu(c10::kCPU);
    auto plain = make();
    auto opt_plain = ampbench::train::makeUpdater(plain->parameters(), sgd, 0.1, cpu);
    at::cross_entropy_loss(plain->forward(x), y).backward();
    auto r1 =
        ampbench::train::finishOptimizerStep(plain->parameters(), *opt_plain, nullptr, clip, true);

    auto scaled = make();
    auto opt_scaled = ampbench::train::makeUpdater(scaled->parameters(), sgd, 0.1, cpu);
    ScalerSpec o;
    o.init_scale = 4096.0;
    LossScaler s(o, c10::Device(c10::kCPU), true);
    s.scale(at::cross_entropy_loss(scaled->forward(x), y)).backward();
    auto r2 =
        ampbench::train::finishOptimizerStep(scaled->parameters(), *opt_scaled, &s, clip, true);

    EXPECT_FALSE(r2.skipped);
    EXPECT_GT(r1.grad_norm.item<double>(), clip);
    EXPECT_NEAR(r1.grad_norm.item<double>(), r2.grad_norm.item<double>(), 1e-5);
    auto p1 = plain->parameters(), p2 = scaled->parameters();
    for (size_t i = 0; i < p1.size(); ++i) {
        EXPECT_TRUE(at::allclose(p1[i], p2[i], 1e-5, 1e-7)) << "parameter " << i;
        EXPECT_FALSE(p2[i].grad().defined()) << "gradients are set to none after the step";
    }
}

TEST(OptimizerStep, InfGradientSkipsTheStep) {
    at::manual_seed(3);
    torch::nn::Linear lin(4, 2);
    ampbench::config::OptimizerSpec sgd;
    sgd.lr = 0.1;
    auto opt = ampbench::train::makeUpdater(lin->parameters(), sgd, 0.1, c10::Device(c10::kCPU));
    auto before = lin->weight.clone();
    LossScaler s(ScalerSpec{}, c10::Device(c10::kCPU), true);
    auto x = at::randn({2, 4});
    x[0][0] = std::numeric_limits<float>::infinity();
    s.scale(lin->forward(x).sum()).backward();
    auto r = ampbench::train::finishOptimizerStep(lin->parameters(), *opt, &s, 0.0, true);
    EXPECT_TRUE(r.skipped);
    EXPECT_TRUE(at::equal(before, lin->weight));
    EXPECT_FLOAT_EQ(static_cast<float>(s.scaleValue()), 32768.0f);
}

// The scaler takes the arm's own settings: what the spec says is what it runs with.
TEST(LossScaler, TakesTheArmsScalerSpecAsItIs) {
    ampbench::config::ArmSpec arm;
    arm.scaler.init_scale = 256.0;
    arm.scaler.growth_factor = 4.0;
    arm.scaler.backoff_factor = 0.25;
    arm.scaler.growth_interval = 7;
    LossScaler s(arm.scaler, c10::Device(c10::kCPU), true);
    EXPECT_EQ(s.options(), arm.scaler);
    EXPECT_EQ(s.scaleValue(), 256.0);
    s.unscale(grads(true));
    s.update();
    EXPECT_EQ(s.scaleValue(), 64.0);
}
