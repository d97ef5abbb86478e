// Gradient checkpointing: same outputs and gradients as the plain model, with
// dropout (RNG replayed) and under CPU autocast.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "core/autocast/AutocastGuard.h"
#include "core/models/Checkpoint.h"
#include "core/models/Registry.h"

using namespace ampbench;

namespace {

struct Grads {
    at::Tensor out;
    std::vector<at::Tensor> grads;
};

Grads runOnce(const config::ModelSpec& spec, const data::InputShape& shape, const at::Tensor& x,
              const at::Tensor& y, bool checkpointing, bool autocast) {
    at::manual_seed(42);
    auto model = models::makeModel(spec, shape);
    model->train();
    model->setCheckpointing(checkpointing);
    at::manual_seed(7);  // the same dropout draws in both runs
    at::Tensor out, loss;
    {
        autocast::AutocastGuard g(c10::DeviceType::CPU, at::kBFloat16, autocast);
        out = model->forward(x);
        loss =
            at::cross_entropy_loss(out.reshape({-1, out.size(-1)}).to(at::kFloat), y.reshape({-1}));
    }
    loss.backward();
    Grads g;
    g.out = out.detach().to(at::kFloat);
    for (const auto& p : model->parameters()) {
        g.grads.push_back(p.grad().clone());
    }
    return g;
}

void expectSame(const Grads& a, const Grads& b, double tol) {
    EXPECT_TRUE(at::allclose(a.out, b.out, tol, tol)) << "outputs differ";
    ASSERT_EQ(a.grads.size(), b.grads.size());
    for (size_t i = 0; i < a.grads.size(); ++i) {
        ASSERT_TRUE(a.grads[i].defined() && b.grads[i].defined()) << "parameter " << i;
        EXPECT_TRUE(at::allclose(a.grads[i], b.grads[i], tol, tol))
            << "gradient " << i << " max diff "
            << (a.grads[i] - b.grads[i]).abs().max().item<double>();
    }
}

}  // namespace

TEST(Checkpointing, TransformerWithDropoutMatches) {
    config::ModelSpec spec;
    spec.name = "transformer";
    spec.width = 32;
    spec.depth = 3;
    spec.heads = 4;
    spec.dropout = 0.2;
    data::InputShape shape;
    shape.seq_len = 12;
    shape.vocab = 50;
    shape.classes = 50;
    auto x = at::randint(50, {4, 12}, at::kLong);
    auto y = at::randint(50, {4, 12}, at::kLong);
    auto before = models::checkpointRecomputations();
    auto plain = runOnce(spec, shape, x, y, false, false);
    EXPECT_EQ(models::checkpointRecomputations(), before) << "no recomputation when off";
    auto ckpt = runOnce(spec, shape, x, y, true, false);
    EXPECT_EQ(models::checkpointRecomputations(), before + 3) << "one per decoder block";
    expectSame(plain, ckpt, 1e-5);
}

TEST(Checkpointing, ResNetMatchesIncludingFirstBlock) {
    config::ModelSpec spec;
    spec.name = "resnet";
    spec.width = 8;
    spec.blocks = {1, 1};
    data::InputShape shape;
    shape.channels = 3;
    shape.height = shape.width = 16;
    shape.classes = 5;
    auto x = at::randn({4, 3, 16, 16});  // does not require grad: the anchor must carry it
    auto y = at::randint(5, {4}, at::kLong);
    expectSame(runOnce(spec, shape, x, y, false, false), runOnce(spec, shape, x, y, true, false),
               1e-5);
}

TEST(Checkpointing, WorksUnderCpuAutocast) {
    config::ModelSpec spec;
    spec.name = "transformer";
    spec.width = 32;
    spec.depth = 2;
    spec.heads = 4;
    data::InputShape shape;
    shape.seq_len = 8;
    shape.vocab = 40;
    shape.classes = 40;
    auto x = at::randint(40, {3, 8}, at::kLong);
    auto y = at::randint(40, {3, 8}, at::kLong);
    auto plain = runOnce(spec, shape, x, y, false, true);
    auto ckpt = runOnce(spec, shape, x, y, true, true);
    // bf16 recomputation reproduces the same low-precision values.
    expectSame(plain, ckpt, 1e-2);
    EXPECT_FALSE(autocast::AutocastGuard::isEnabled(c10::DeviceType::CPU));
}
