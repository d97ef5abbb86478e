// Autocast guard: low-precision matmuls inside, fp32 loss, state restored after,
// also when an exception leaves the region.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <stdexcept>

#include "core/autocast/AutocastGuard.h"

using ampbench::autocast::AutocastGuard;

TEST(AutocastGuard, MatmulLowPrecisionLossFp32) {
    ASSERT_FALSE(AutocastGuard::isEnabled(c10::DeviceType::CPU));
    auto a = at::randn({8, 16});
    auto w = at::randn({16, 4}).requires_grad_();
    auto y = at::randint(4, {8}, at::kLong);
    at::Tensor logits, loss;
    {
        AutocastGuard g(c10::DeviceType::CPU, at::kBFloat16);
        EXPECT_TRUE(AutocastGuard::isEnabled(c10::DeviceType::CPU));
        logits = at::matmul(a, w);
        loss = at::cross_entropy_loss(logits, y);
    }
    EXPECT_EQ(logits.scalar_type(), at::kBFloat16);
    EXPECT_EQ(loss.scalar_type(), at::kFloat);
    loss.backward();
    EXPECT_EQ(w.grad().scalar_type(), at::kFloat) << "master weights and their gradients stay fp32";
}

TEST(AutocastGuard, RestoresPreviousState) {
    auto dtype_before = AutocastGuard::dtype(c10::DeviceType::CPU);
    bool cache_before = AutocastGuard::cacheEnabled();
    {
        AutocastGuard outer(c10::DeviceType::CPU, at::kBFloat16, true, false);
        EXPECT_FALSE(AutocastGuard::cacheEnabled());
        {
            AutocastGuard inner(c10::DeviceType::CPU, at::kBFloat16, /*enabled=*/false);
            EXPECT_FALSE(AutocastGuard::isEnabled(c10::DeviceType::CPU));
            EXPECT_EQ(at::matmul(at::randn({2, 2}), at::randn({2, 2})).scalar_type(), at::kFloat);
        }
        EXPECT_TRUE(AutocastGuard::isEnabled(c10::DeviceType::CPU));
    }
    EXPECT_FALSE(AutocastGuard::isEnabled(c10::DeviceType::CPU));
    EXPECT_EQ(AutocastGuard::dtype(c10::DeviceType::CPU), dtype_before);
    EXPECT_EQ(AutocastGuard::cacheEnabled(), cache_before);
}

TEST(AutocastGuard, RestoresStateWhenExceptionLeaves) {
    try {
        AutocastGuard g(c10::DeviceType::CPU, at::kBFloat16);
        throw std::runtime_error("boom");
    } catch (const std::runtime_error&) {
    }
    EXPECT_FALSE(AutocastGuard::isEnabled(c10::DeviceType::CPU));
    EXPECT_EQ(at::matmul(at::randn({2, 2}), at::randn({2, 2})).scalar_type(), at::kFloat);
}

TEST(AutocastGuard, RejectsUnsupportedDtype) {
    EXPECT_THROW(AutocastGuard(c10::DeviceType::CPU, at::kDouble), c10::Error);
    EXPECT_FALSE(AutocastGuard::isEnabled(c10::DeviceType::CPU));
}
