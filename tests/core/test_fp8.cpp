// FP8 arms: the spec, the scaling arithmetic (on CPU tensors), which Linear layers
// take the scaled matmul, the hook every built-in model's Linear layers go through,
// and the refusal where the device or the build has no FP8 — then, on a GPU of
// compute capability 8.9 or later, the FP8 Linear against bf16, its saturation
// count, a run and a run captured into a CUDA graph.
#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <torch/nn/modules/linear.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/amp/Fp8Linear.h"
#include "core/amp/Fp8Scaling.h"
#include "core/amp/HalfLinear.h"
#include "core/autocast/AutocastGuard.h"
#include "core/config/SpecJson.h"
#include "core/config/Validation.h"
#include "core/models/Registry.h"
#include "core/train/SetupCheck.h"
#include "core/train/Trainer.h"
#include "tests/core/CudaSpecs.h"

using namespace ampbench;
using config::Precision;

namespace {

double at1(const at::Tensor& t) {
    return t.to(at::kDouble).cpu().reshape({-1})[0].item<double>();
}

at::Tensor one(double v) {
    return at::full({1}, v, at::kFloat);
}

/// Counts the Linear calls of a forward and computes them as at::linear.
struct CountingHook : models::LinearHook {
    int calls = 0;
    int gelu_calls = 0;
    at::Tensor linear(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b) override {
        ++calls;
        return at::linear(x, w, b);
    }
    at::Tensor geluLinear(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b) override {
        ++gelu_calls;
        return LinearHook::geluLinear(x, w, b);
    }
    int norm_calls = 0;
    at::Tensor layerNormLinear(const at::Tensor& x, const at::Tensor& g, const at::Tensor& beta,
                               double eps, const at::Tensor& w, const at::Tensor& b) override {
        ++norm_calls;
        return LinearHook::layerNormLinear(x, g, beta, eps, w, b);
    }
};

/// A tap that only looks, as the numerics recorder's does between its records.
struct LookingTap : models::ModuleTap {
    bool fp32(const std::string&) const override { return false; }
    at::Tensor output(const std::string&, const at::Tensor& out) override { return out; }
};

config::ExperimentSpec decoderOn(config::DeviceKind device, int width, int vocab) {
    config::ExperimentSpec s;
    s.model.name = "transformer";
    s.model.width = width;
    s.model.depth = 2;
    s.model.heads = 4;
    s.data.name = "synthetic-tokens";
    s.data.seq_len = 32;
    s.data.vocab = vocab;
    s.micro_batch = 8;
    s.micro_steps = 20;
    s.eval_interval = 0;
    s.eval_batches = 1;
    s.device = device;
    s.arms = {{"bf16", Precision::AmpBf16}, {"fp8", Precision::Fp8}};
    return s;
}

/// A small decoder (width 32, vocabulary 64, 16 tokens) on the CPU in eval mode, its
/// weights from `seed`, and a batch of two sequences for it.
struct CpuDecoder {
    std::shared_ptr<models::Network> model;
    at::Tensor tokens;
    int depth = 0;
};
CpuDecoder cpuDecoder(uint64_t seed) {
    data::InputShape shape;
    shape.seq_len = 16;
    shape.vocab = 64;
    const auto spec = decoderOn(config::DeviceKind::Cpu, 32, 64).model;
    torch::manual_seed(seed);
    CpuDecoder d{models::modelFor(spec, shape, c10::kCPU), {}, spec.depth};
    d.model->eval();
    d.tokens = at::randint(64, {2, 16}, at::kLong);
    return d;
}

}  // namespace

TEST(Fp8, TheSpecCarriesTheRecipeAndRefusesAModelFile) {
    std::vector<config::FieldError> errors;
    auto spec = config::specFromJsonText(
        R"({"arms": [{"name": "bf16", "precision": "amp-bf16"},
                     {"name": "f8", "precision": "fp8", "fp8_recipe": "current",
                      "fp8_history": 32, "fp8_margin": 1}]})",
        errors);
    ASSERT_TRUE(errors.empty()) << errors.front().toString();
    ASSERT_EQ(spec.arms.size(), 2u);
    EXPECT_EQ(spec.arms[1].precision, Precision::Fp8);
    EXPECT_EQ(spec.arms[1].fp8_recipe, config::Fp8Recipe::Current);
    EXPECT_EQ(spec.arms[1].fp8_history, 32);
    EXPECT_EQ(spec.arms[1].fp8_margin, 1);
    EXPECT_TRUE(config::validate(spec).empty());
    std::vector<config::FieldError> again;
    EXPECT_EQ(config::specFromJsonText(config::specToJsonText(spec), again), spec);

    spec.arms[1].fp8_history = 0;
    auto bad = config::validate(spec);
    ASSERT_FALSE(bad.empty());
    EXPECT_EQ(bad.front().field, "arms[1].fp8_history");

    spec.arms[1].fp8_history = 16;
    spec.model.name = "torchscript";
    spec.model.file = "model.pt";
    bool named = false;
    for (const auto& e : config::validate(spec)) {
        if (e.field == "arms[1].precision") {
            named = true;
            EXPECT_NE(e.message.find("TorchScript"), std::string::npos) << e.message;
        }
    }
    EXPECT_TRUE(named) << "an fp8 arm on a model file must be refused, naming its precision";
}

TEST(Fp8, TheScaleFollowsTheLargestAmaxOfTheHistory) {
    auto s = amp::Fp8Scaling::make(3, amp::kE4m3Max, 0, c10::kCPU);
    EXPECT_EQ(at1(s.scale), 1.0);
    auto cast = [&s](double amax) {
        s.amax.fill_(amax);
        s.push();
        return at1(s.scale);
    };
    EXPECT_DOUBLE_EQ(cast(2.0), 224.0);  // 448 / 2
    EXPECT_DOUBLE_EQ(cast(4.0), 112.0);
    EXPECT_DOUBLE_EQ(cast(1.0), 112.0);  // 4 is still in the history (1, 4, 2)
    EXPECT_DOUBLE_EQ(cast(1.0), 112.0);  // (1, 1, 4)
    EXPECT_DOUBLE_EQ(cast(1.0), 448.0);  // 4 rolled out: (1, 1, 1)
    EXPECT_EQ(at1(s.amax), 0.0) << "the amax of the next cast starts from zero";
    EXPECT_DOUBLE_EQ(at1(s.history[0]), 1.0);

    // A non-finite cast neither sets the scale nor poisons it while in the history.
    EXPECT_DOUBLE_EQ(cast(std::numeric_limits<double>::infinity()), 448.0);
    EXPECT_DOUBLE_EQ(cast(std::nan("")), 448.0);
    EXPECT_DOUBLE_EQ(cast(8.0), 56.0);

    auto margin = amp::Fp8Scaling::make(1, amp::kE5m2Max, 2, c10::kCPU);
    margin.amax.fill_(1.0);
    margin.push();
    EXPECT_DOUBLE_EQ(at1(margin.scale), 57344.0 / 4.0) << "2^margin of room below the largest";
}

TEST(Fp8, TheScaleKeepsThePreviousWhereAmaxIsUnusable) {
    const auto prev = one(3.0);
    EXPECT_EQ(at1(amp::scaleFromAmax(one(0.0), prev, amp::kE4m3Max, 0)), 3.0);
    EXPECT_EQ(at1(amp::scaleFromAmax(one(INFINITY), prev, amp::kE4m3Max, 0)), 3.0);
    EXPECT_EQ(at1(amp::scaleFromAmax(one(NAN), prev, amp::kE4m3Max, 0)), 3.0);
    const double tiny = at1(amp::scaleFromAmax(one(1e-44), prev, amp::kE4m3Max, 0));
    EXPECT_TRUE(std::isfinite(tiny)) << "a tiny amax gives the largest float, not inf";
    EXPECT_EQ(at1(amp::scaleFromAmax(one(0.5), prev, amp::kE4m3Max, 1)), 448.0);
}

TEST(Fp8, TheCastSaturatesAtTheLargestAndKeepsNonFiniteVisible) {
    const auto x = at::tensor({1000.0f, -1000.0f, 1.0f, INFINITY, -INFINITY, 0.0f});
    const auto y = amp::scaledForCast(x, one(1.0), amp::kE4m3Max);
    EXPECT_EQ(y[0].item<float>(), 448.0f);
    EXPECT_EQ(y[1].item<float>(), -448.0f);
    EXPECT_EQ(y[2].item<float>(), 1.0f);
    EXPECT_TRUE(std::isnan(y[3].item<float>())) << "an overflow upstream must not saturate away";
    EXPECT_TRUE(std::isnan(y[4].item<float>()));
    EXPECT_EQ(y[5].item<float>(), 0.0f);
    // 2 × 64 = 128 lies on both formats' grids (where LibTorch rounds to them).
    const auto scaled = amp::scaledForCast(at::tensor({2.0f}), one(64.0), amp::kE5m2Max);
    EXPECT_EQ(scaled[0].item<float>(), 128.0f);
}

TEST(Fp8, LayersTheScaledMatmulCannotTakeStayInBf16AndAreNamed) {
    data::InputShape tokens;
    tokens.seq_len = 32;
    tokens.vocab = 1000;  // 1000 = 16 × 62.5: the head cannot
    auto spec = decoderOn(config::DeviceKind::Cpu, 256, 1000).model;
    auto model = models::modelFor(spec, tokens, c10::kCPU);
    const auto plan = amp::planFp8Layers(*model);
    ASSERT_EQ(plan.size(), 2u * 4u + 1u);  // qkv, proj, fc1, fc2 per block, the head
    for (const auto& p : plan) {
        if (p.path == "head") {
            EXPECT_FALSE(p.fp8);
            EXPECT_EQ(p.why_not, "1000 outputs: not a multiple of 16");
        } else {
            EXPECT_TRUE(p.fp8) << p.path << ": " << p.why_not;
        }
    }
    const std::string text = amp::describe(plan);
    EXPECT_NE(text.find("8 of 9 Linear layers in FP8"), std::string::npos) << text;
    EXPECT_NE(text.find("in bf16: head (1000 outputs: not a multiple of 16)"), std::string::npos)
        << text;

    config::ModelSpec mlp;
    mlp.name = "mlp";
    mlp.width = 32;
    mlp.depth = 1;
    const auto small = amp::planFp8Layers(*models::modelFor(mlp, data::InputShape{}, c10::kCPU));
    ASSERT_EQ(small.size(), 2u);
    EXPECT_FALSE(small[0].fp8);
    EXPECT_NE(small[0].why_not.find("too small"), std::string::npos) << small[0].why_not;
}

// Published figures say FP8 does not pay on small matmuls (torchao: 0.80x bf16 at
// 1024x2048x1024, 1.39x at 4096x8192x16384): auto weighs each layer's matmul time saved
// against its casts' and takes FP8 only where it pays.
TEST(Fp8, AutoTakesFp8WhereTheMatmulSavesMoreThanTheCastsCost) {
    const auto small = amp::weighFp8Layer("a", 2048, 1024, 1024);
    EXPECT_FALSE(small.fp8) << small.why_not;
    EXPECT_GT(small.casts_s, small.saves_s);
    EXPECT_NE(small.why_not.find("outweigh"), std::string::npos) << small.why_not;
    EXPECT_NE(small.why_not.find("1024 rows"), std::string::npos) << small.why_not;
    const auto large = amp::weighFp8Layer("b", 8192, 16384, 4096);
    EXPECT_TRUE(large.fp8) << large.why_not;
    EXPECT_GT(large.saves_s, 2 * large.casts_s);
    // Saving and casts both grow with the rows (M·K·N against M·(K + N)); the casts'
    // launches do not. Few rows, the launches decide; many, the shapes: a 2048 x 2048
    // layer tips over to FP8, a 768 x 768 one never does at these rates.
    const auto few = amp::weighFp8Layer("c", 2048, 2048, 256);
    const auto many = amp::weighFp8Layer("c", 2048, 2048, 1 << 20);
    EXPECT_FALSE(few.fp8);
    EXPECT_TRUE(many.fp8) << many.why_not;
    EXPECT_FALSE(amp::weighFp8Layer("d", 768, 768, 1 << 20).fp8);
    // A shape the scaled matmul cannot take is never weighed.
    const auto odd = amp::weighFp8Layer("head", 768, 50257, 16384);
    EXPECT_FALSE(odd.fp8);
    EXPECT_EQ(odd.why_not, "50257 outputs: not a multiple of 16");
    EXPECT_EQ(odd.saves_s, 0.0);
}

// The GPT-2-small-shaped decoder (d 768, B16 x T1024 = 16,384 rows): the head (768 x
// 32,768) is the layer that pays most, the attention's output projection (768 x 768)
// does not pay; a faster FP8 matmul tips more layers over. The plan names the layers
// left in bf16 once for all blocks.
TEST(Fp8, AutoOnADecoderTakesTheHeadAndLeavesTheSmallProjectionInBf16) {
    data::InputShape tokens;
    tokens.seq_len = 1024;
    tokens.vocab = 32768;
    auto spec = decoderOn(config::DeviceKind::Cpu, 768, 32768).model;
    auto model = models::modelFor(spec, tokens, c10::kCPU);
    const int64_t rows = 16 * 1024;
    const auto plan = amp::planFp8Layers(*model, "auto", rows);
    ASSERT_EQ(plan.size(), 2u * 4u + 1u);
    std::map<std::string, bool> fp8;
    for (const auto& p : plan) {
        fp8[p.path] = p.fp8;
        EXPECT_GT(p.saves_s, 0.0) << p.path;
        EXPECT_EQ(p.fp8, p.saves_s > p.casts_s) << p.path;
    }
    EXPECT_TRUE(fp8["head"]);
    EXPECT_FALSE(fp8["blocks.0.proj"]);
    EXPECT_FALSE(fp8["blocks.1.proj"]);
    const std::string text = amp::describe(plan);
    EXPECT_NE(text.find("blocks.*.proj (its casts"), std::string::npos) << text;
    EXPECT_EQ(text.find("blocks.0.proj"), std::string::npos) << "named once: " << text;
    // Four times the bf16 rate in FP8: all of the decoder pays.
    amp::Fp8CostModel fast;
    fast.fp8_flops = 4 * fast.bf16_flops;
    const auto faster = amp::planFp8Layers(*model, "auto", rows, fast);
    const auto count = [](const std::vector<amp::Fp8LayerPlan>& p) {
        return std::count_if(p.begin(), p.end(), [](const auto& l) { return l.fp8; });
    };
    EXPECT_EQ(count(plan), 7) << text;
    EXPECT_EQ(count(faster), 9);
    // With the rows unknown, auto takes every layer the scaled matmul takes.
    EXPECT_EQ(count(amp::planFp8Layers(*model, "auto", 0)), 9);
}

// fp8_modules names the layers itself: a bare name is that layer in every block, a
// pattern the paths it matches; the rest stays bf16 and says why. A name that matches
// no Linear layer is refused with the model's layers listed.
TEST(Fp8, Fp8ModulesNamesTheLayersThatComputeInFp8) {
    data::InputShape tokens;
    tokens.seq_len = 32;
    tokens.vocab = 1024;
    auto spec = decoderOn(config::DeviceKind::Cpu, 256, 1024).model;
    auto model = models::modelFor(spec, tokens, c10::kCPU);
    for (const std::string modules : {"head,fc1", "head; blocks.*.fc1", " fc1 ;head"}) {
        const auto plan = amp::planFp8Layers(*model, modules, 16 * 32);
        std::vector<std::string> chosen;
        for (const auto& p : plan) {
            if (p.fp8) {
                chosen.push_back(p.path);
            } else {
                EXPECT_EQ(p.why_not, "not in fp8_modules") << p.path;
            }
        }
        EXPECT_EQ(chosen, (std::vector<std::string>{"blocks.0.fc1", "blocks.1.fc1", "head"}))
            << modules;
    }
    EXPECT_TRUE(amp::unmatchedFp8Modules(*model, "head;fc1").empty());
    EXPECT_TRUE(amp::unmatchedFp8Modules(*model, "auto").empty());
    EXPECT_TRUE(amp::unmatchedFp8Modules(*model, "ALL").empty());
    const std::string why = amp::unmatchedFp8Modules(*model, "head;fc3;blocks.9.*");
    EXPECT_NE(why.find("'fc3', 'blocks.9.*' names no Linear layer"), std::string::npos) << why;
    EXPECT_NE(why.find("blocks.*.qkv, blocks.*.proj, blocks.*.fc1, blocks.*.fc2, head"),
              std::string::npos)
        << why;
}

// fp8_modules on an arm that is not fp8 does nothing: the spec runs, with a warning
// naming the field.
TEST(Fp8, Fp8ModulesOnAnotherArmIsAWarning) {
    auto spec = decoderOn(config::DeviceKind::Cpu, 256, 1024);
    EXPECT_EQ(amp::linearRows(spec), 8 * 32) << "micro-batch x sequence for the decoder";
    spec.arms = {{"bf16", Precision::AmpBf16}};
    spec.arms[0].fp8_modules = "head";
    EXPECT_TRUE(config::validate(spec).empty());
    const auto w = config::warnings(spec);
    ASSERT_EQ(w.size(), 1u);
    EXPECT_EQ(w[0].field, "arms[0].fp8_modules");
    EXPECT_NE(w[0].message.find("no effect on a amp-bf16 arm"), std::string::npos) << w[0].message;
}

TEST(Fp8, EveryLinearLayerOfEachBuiltInModelGoesThroughTheHook) {
    data::InputShape images;  // 1 × 28 × 28, 10 classes
    data::InputShape tokens;
    tokens.seq_len = 16;
    tokens.vocab = 64;
    struct Case {
        std::string name;
        data::InputShape shape;
        at::Tensor input;
    };
    const std::vector<Case> cases = {
        {"mlp", images, at::randn({4, 1, 28, 28})},
        {"cnn", images, at::randn({4, 1, 28, 28})},
        {"resnet", images, at::randn({4, 1, 28, 28})},
        {"transformer", tokens, at::randint(64, {4, 16}, at::kLong)},
    };
    for (const auto& c : cases) {
        config::ModelSpec spec;
        spec.name = c.name;
        spec.width = 16;
        spec.depth = 2;
        spec.heads = 2;
        spec.blocks = {1, 1};
        torch::manual_seed(1);
        auto model = models::modelFor(spec, c.shape, c10::kCPU);
        model->eval();
        const auto plain = model->forward(c.input);
        CountingHook hook;
        model->setLinearHook(&hook);
        const auto hooked = model->forward(c.input);
        EXPECT_EQ(hook.calls, static_cast<int>(amp::planFp8Layers(*model).size())) << c.name;
        EXPECT_TRUE(at::equal(plain, hooked)) << c.name;
        model->setLinearHook(nullptr);
    }
}

// The decoder hands GELU and fc2 to the hook together (so FP8 can take GELU inside
// fc2's input cast) with a numerics tap set as without one: a run that records
// numerics computes what one that does not computes.
TEST(Fp8, TheDecoderHandsGeluAndFc2ToTheHookWithOrWithoutATap) {
    const auto [model, x, depth] = cpuDecoder(2);
    CountingHook hook;
    model->setLinearHook(&hook);
    const auto plain = model->forward(x);
    EXPECT_EQ(hook.gelu_calls, depth);
    // Each block's two LayerNorms with the Linear after them, and ln_f with the head.
    EXPECT_EQ(hook.norm_calls, 2 * depth + 1);
    LookingTap tap;
    model->setTap(&tap);
    const auto tapped = model->forward(x);
    EXPECT_EQ(hook.gelu_calls, 2 * depth) << "the tapped forward went around the hook";
    // A LayerNorm's output is a tap point: with a tap it is computed on its own.
    EXPECT_EQ(hook.norm_calls, 2 * depth + 1);
    EXPECT_TRUE(at::equal(plain, tapped));
    model->setTap(nullptr);
    model->setLinearHook(nullptr);
}

// The fp16/bf16 arms' hook fuses only on CUDA: on the CPU the decoder under bf16
// autocast computes exactly what it computes without the hook.
TEST(HalfLinears, OffTheGpuTheDecoderComputesAsWithoutTheHook) {
    const auto d = cpuDecoder(3);
    autocast::AutocastGuard autocast(c10::DeviceType::CPU, at::kBFloat16);
    const auto plain = d.model->forward(d.tokens);
    amp::HalfLinears hook(at::kBFloat16);
    d.model->setLinearHook(&hook);
    const auto hooked = d.model->forward(d.tokens);
    d.model->setLinearHook(nullptr);
    EXPECT_TRUE(at::equal(plain, hooked));
    EXPECT_EQ(hook.fusedNorms(), 0);
}

// The fused LayerNorm's autograd op on the CPU, where it runs ATen's LayerNorm inside
// the same op: its output and gradients are those of layer_norm then a bf16 cast, and it
// takes only what its kernels take.
TEST(HalfLinears, TheLayerNormWrittenInHalfPrecisionHasLayerNormsValueAndGradients) {
    torch::manual_seed(4);
    const auto x = at::randn({3, 5, 40}) * 2 + 0.5;
    const auto gamma = at::randn({40}) * 0.1 + 1, beta = at::randn({40}) * 0.1;
    const auto grad = at::randn({3, 5, 40}).to(at::kBFloat16);
    std::vector<at::Tensor> got[2];
    for (const bool ours : {true, false}) {
        auto xs = x.clone().requires_grad_(), g = gamma.clone().requires_grad_(),
             b = beta.clone().requires_grad_();
        ASSERT_TRUE(amp::layerNormToHalfTakes(xs, g, b));
        const auto y = ours ? amp::layerNormToHalf(xs, g, b, 1e-5, at::kBFloat16)
                            : at::layer_norm(xs, {40}, g, b, 1e-5).to(at::kBFloat16);
        EXPECT_EQ(y.scalar_type(), at::kBFloat16);
        EXPECT_EQ(y.sizes(), x.sizes());
        y.backward(grad);
        got[ours] = {y, xs.grad(), g.grad(), b.grad()};
    }
    const char* const names[] = {"output", "input gradient", "gamma gradient", "beta gradient"};
    for (size_t i = 0; i < 4; ++i) {
        ASSERT_TRUE(got[1][i].defined()) << names[i];
        EXPECT_EQ(got[1][i].sizes(), got[0][i].sizes()) << names[i];
        EXPECT_TRUE(at::allclose(got[1][i].to(at::kFloat), got[0][i].to(at::kFloat), 1e-5, 1e-6))
            << names[i];
    }
    EXPECT_FALSE(amp::layerNormToHalfTakes(x.to(at::kBFloat16), gamma, beta)) << "a bf16 input";
    EXPECT_FALSE(amp::layerNormToHalfTakes(x, gamma.narrow(0, 0, 39), beta)) << "gamma too short";
    EXPECT_FALSE(amp::layerNormToHalfTakes(x, at::Tensor(), beta)) << "no gamma";
    EXPECT_FALSE(amp::layerNormToHalfTakes(at::zeros({0, 40}), gamma, beta)) << "no rows";
}

TEST(Fp8, AnFp8ArmIsRefusedBeforeAnythingRunsWhereThereIsNoFp8) {
    if (amp::fp8Unavailable(c10::Device(c10::kCPU)).empty()) {
        GTEST_SKIP() << "the CPU cannot be refused by a build that has no FP8 refusal to give";
    }
    const auto spec = decoderOn(config::DeviceKind::Cpu, 128, 64);
    const auto report = train::checkSetup(spec, /*run_batch=*/false, /*own_threads=*/false);
    bool named = false;
    for (const auto& p : report.problems) {
        if (p.field == "arms[1].precision") {
            named = true;
            EXPECT_NE(p.message.find("arm 'fp8': fp8"), std::string::npos) << p.message;
            EXPECT_TRUE(p.message.find("CUDA") != std::string::npos) << p.message;
        }
    }
    EXPECT_TRUE(named) << report.problemText();
    EXPECT_EQ(report.problems.size(), 1u) << report.problemText();
}

// ------------------------------------------------------------------ on the GPU

#define REQUIRE_FP8()                                                           \
    REQUIRE_CUDA();                                                             \
    if (const auto why = amp::fp8Unavailable(test_cuda::kCuda); !why.empty()) { \
        GTEST_SKIP() << why;                                                    \
    }

namespace {

enum class First { Nothing, Gelu, LayerNorm };

/// One Linear layer as a model, so Fp8Linears can plan it; GELU first, as the
/// decoder's MLP ends, or a LayerNorm first, as its attention and MLP begin (through
/// the hook's geluLinear or layerNormLinear where a hook is set).
struct OneLinearImpl : models::Network {
    torch::nn::Linear fc{nullptr};
    torch::nn::LayerNorm ln{nullptr};
    bool gelu = false;
    OneLinearImpl(int in, int out, First first = First::Nothing) : gelu(first == First::Gelu) {
        fc = register_module("fc", torch::nn::Linear(in, out));
        if (first == First::LayerNorm) {
            ln = register_module("ln", torch::nn::LayerNorm(torch::nn::LayerNormOptions({in})));
            torch::NoGradGuard no_grad;
            ln->weight.normal_(1.0, 0.3);
            ln->bias.normal_(0.0, 0.3);
        }
    }
    at::Tensor forward(const at::Tensor& x) override {
        auto* hook = linearHook();
        if (ln) {
            return hook ? hook->layerNormLinear(x, ln->weight, ln->bias, ln->options.eps(),
                                                fc->weight, fc->bias)
                        : at::linear(ln->forward(x), fc->weight, fc->bias);
        }
        if (gelu) {
            return hook ? hook->geluLinear(x, fc->weight, fc->bias)
                        : at::linear(at::gelu(x), fc->weight, fc->bias);
        }
        return hook ? hook->linear(x, fc->weight, fc->bias) : at::linear(x, fc->weight, fc->bias);
    }
};

double relativeError(const at::Tensor& got, const at::Tensor& want) {
    const auto w = want.to(at::kDouble);
    return ((got.to(at::kDouble) - w).norm() / w.norm()).item<double>();
}

/// The net's output and the gradients of its input, weight and bias for the output
/// gradient `dy`: in FP8 through `fp8` (under bf16 autocast), else in fp32.
std::vector<at::Tensor> outputAndGradients(OneLinearImpl& net, amp::Fp8Linears* fp8,
                                           const at::Tensor& x0, const at::Tensor& dy) {
    net.zero_grad();
    auto x = x0.clone().requires_grad_(true);
    net.setLinearHook(fp8);
    at::Tensor y;
    {
        autocast::AutocastGuard guard(c10::DeviceType::CUDA, at::kBFloat16, fp8 != nullptr, true);
        y = net.forward(x);
    }
    y.backward(dy.to(y.scalar_type()));
    std::vector<at::Tensor> out = {y.detach().to(at::kFloat), x.grad().to(at::kFloat),
                                   net.fc->weight.grad().clone(), net.fc->bias.grad().clone()};
    if (net.ln) {
        out.push_back(net.ln->weight.grad().clone());
        out.push_back(net.ln->bias.grad().clone());
    }
    return out;
}

/// Three FP8 passes (the first scaled from its own amax, then delayed) against fp32.
// e4m3 keeps 3 mantissa bits (a value's error up to 2^-4), e5m2 2: over a sum of 512
// products the errors average out to a few per cent of the result's norm. The
// bounds are that with room: 8 % forward, 15 % for the gradients of e5m2.
void expectFp8WithinTheFormatsPrecision(OneLinearImpl& net, const at::Tensor& x0,
                                        const at::Tensor& dy) {
    config::ArmSpec arm{"fp8", Precision::Fp8};
    amp::Fp8Linears fp8(net, arm, test_cuda::kCuda);
    ASSERT_TRUE(fp8.plan().at(0).fp8) << fp8.plan().at(0).why_not;
    const auto want = outputAndGradients(net, nullptr, x0, dy);
    for (int pass = 0; pass < 3; ++pass) {
        const auto got = outputAndGradients(net, &fp8, x0, dy);
        EXPECT_LT(relativeError(got[0], want[0]), 0.08) << "forward, pass " << pass;
        EXPECT_LT(relativeError(got[1], want[1]), 0.15) << "input gradient, pass " << pass;
        EXPECT_LT(relativeError(got[2], want[2]), 0.15) << "weight gradient, pass " << pass;
        EXPECT_LT(relativeError(got[3], want[3]), 0.02) << "bias gradient, pass " << pass;
        for (size_t i = 4; i < got.size(); ++i) {
            EXPECT_LT(relativeError(got[i], want[i]), 0.15)
                << (i == 4 ? "LayerNorm weight" : "LayerNorm bias") << " gradient, pass " << pass;
        }
        EXPECT_EQ(got[2].scalar_type(), at::kFloat) << "fp32 master weights get fp32 gradients";
    }
    net.setLinearHook(nullptr);
}
}  // namespace

TEST(Fp8Cuda, ALinearMatchesFp32ForwardAndBothGradientsWithinTheFormatsPrecision) {
    REQUIRE_FP8();
    torch::manual_seed(3);
    auto net = std::make_shared<OneLinearImpl>(512, 768);
    net->to(test_cuda::kCuda);
    expectFp8WithinTheFormatsPrecision(
        *net, at::randn({4, 64, 512}, at::device(test_cuda::kCuda)),
        at::randn({4, 64, 768}, at::device(test_cuda::kCuda)) * 1e-3);
}

// The GELU computed inside the input's cast: the forward and all three gradients as
// at::gelu then at::linear in fp32 compute them, within the same bounds.
TEST(Fp8Cuda, GeluInsideTheInputsCastMatchesGeluThenLinearInFp32) {
    REQUIRE_FP8();
    torch::manual_seed(4);
    auto net = std::make_shared<OneLinearImpl>(768, 256, First::Gelu);
    net->to(test_cuda::kCuda);
    expectFp8WithinTheFormatsPrecision(
        *net, at::randn({8, 32, 768}, at::device(test_cuda::kCuda)),
        at::randn({8, 32, 256}, at::device(test_cuda::kCuda)) * 1e-2);
}

// The LayerNorm applied inside the input's cast (from the second pass on, once the
// input's history holds an amax; the first normalises, then casts): the forward and
// the gradients of the input, the Linear's and the LayerNorm's parameters as
// at::layer_norm then at::linear in fp32 compute them, within the same bounds.
TEST(Fp8Cuda, ALayerNormInsideTheInputsCastMatchesLayerNormThenLinearInFp32) {
    REQUIRE_FP8();
    torch::manual_seed(5);
    auto net = std::make_shared<OneLinearImpl>(768, 512, First::LayerNorm);
    net->to(test_cuda::kCuda);
    const auto x = at::randn({8, 32, 768}, at::device(test_cuda::kCuda)) * 3 + 1;
    expectFp8WithinTheFormatsPrecision(
        *net, x, at::randn({8, 32, 512}, at::device(test_cuda::kCuda)) * 1e-2);
    // The fused path was taken, and gives what LayerNorm then the FP8 cast gives.
    config::ArmSpec arm{"fp8", Precision::Fp8};
    amp::Fp8Linears fp8(*net, arm, test_cuda::kCuda);
    const auto first = outputAndGradients(*net, &fp8, x, x.new_ones({8, 32, 512}) * 1e-2);
    EXPECT_EQ(fp8.normsFused(), 0) << "the first cast has no history to scale by";
    const auto fused = outputAndGradients(*net, &fp8, x, x.new_ones({8, 32, 512}) * 1e-2);
    EXPECT_EQ(fp8.normsFused(), 1);
    EXPECT_LT(relativeError(fused[0], first[0]), 0.02);
    net->setLinearHook(nullptr);
}

// The bias gradient comes out of the output gradient's cast (column sums per tile,
// then the tiles' sums in a fixed order): it is the float32 sum of the output
// gradient, and the same bits on every run.
TEST(Fp8Cuda, TheBiasGradientIsTheOutputGradientsColumnSumsOnEveryRunAlike) {
    REQUIRE_FP8();
    torch::manual_seed(6);
    auto net = std::make_shared<OneLinearImpl>(256, 384);
    net->to(test_cuda::kCuda);
    config::ArmSpec arm{"fp8", Precision::Fp8};
    amp::Fp8Linears fp8(*net, arm, test_cuda::kCuda);
    net->setLinearHook(&fp8);
    // 4,128 rows: not a whole number of the cast's 64-row tiles.
    const auto x = at::randn({4128, 256}, at::device(test_cuda::kCuda));
    const auto dy = at::randn({4128, 384}, at::device(test_cuda::kCuda)).to(at::kBFloat16);
    auto biasGrad = [&] {
        net->zero_grad();
        at::Tensor y;
        {
            autocast::AutocastGuard guard(c10::DeviceType::CUDA, at::kBFloat16, true, true);
            y = net->forward(x);
        }
        y.backward(dy);
        return net->fc->bias.grad().clone();
    };
    const auto first = biasGrad();
    const auto want = dy.to(at::kDouble).sum(0);
    EXPECT_LT(relativeError(first, want), 1e-5);
    EXPECT_EQ(first.scalar_type(), at::kFloat);
    for (int pass = 0; pass < 3; ++pass) {
        EXPECT_TRUE(at::equal(biasGrad(), first)) << "pass " << pass;
    }
}

TEST(Fp8Cuda, ADelayedScaleThatFallsBehindSaturatesAndTheRecordsCountIt) {
    REQUIRE_FP8();
    auto net = std::make_shared<OneLinearImpl>(256, 256);
    net->to(test_cuda::kCuda);
    config::ArmSpec arm{"fp8", Precision::Fp8};
    arm.fp8_history = 1;
    amp::Fp8Linears fp8(*net, arm, test_cuda::kCuda);
    net->setLinearHook(&fp8);
    autocast::AutocastGuard guard(c10::DeviceType::CUDA, at::kBFloat16, true, true);
    const auto x = at::rand({64, 256}, at::device(test_cuda::kCuda));  // amax just under 1
    {
        at::NoGradGuard no_grad;
        net->forward(x);  // scale ≈ 448 from then on
    }
    fp8.countNextStep();
    {
        at::NoGradGuard no_grad;
        net->forward(x * 100);  // the delayed scale puts most values far over 448
    }
    const auto records = fp8.takeCastRecords(7);
    ASSERT_EQ(records.size(), 2u);  // the input and the weight; no backward ran
    const auto& in = records[0];
    EXPECT_EQ(in.name, "fc:input");
    EXPECT_EQ(in.format, "e4m3");
    EXPECT_EQ(in.kind, run::NumericsKind::Cast);
    EXPECT_EQ(in.step, 7);
    EXPECT_EQ(in.numel, 64 * 256);
    EXPECT_GT(in.saturated, 0.9) << "x·100 at the scale of x";
    EXPECT_NEAR(in.scale, 448.0, 1.0);
    EXPECT_LT(records[1].saturated, 1e-9) << "the weight's scale follows the weight";
    EXPECT_TRUE(fp8.takeCastRecords(8).empty()) << "counting ends with the records taken";
}

TEST(Fp8Cuda, AnFp8ArmTrainsRecordsItsCastsAndNamesItsLayers) {
    REQUIRE_FP8();
    auto spec = test_cuda::cudaDecoderSpec(256, 2, 4, 64, 1000, 16, 40, Precision::Fp8);
    spec.arms[0].fp8_modules = "all";  // too small for auto to pick any: the mechanics here
    spec.numerics_every = 10;
    struct Seen : run::TrainObserver {
        std::vector<double> losses;
        std::vector<run::NumericsRecord> casts;
        std::string layers;
        void onStep(const run::StepRecord& r) override { losses.push_back(r.loss); }
        void onEvent(const run::EventRecord& e) override {
            if (e.message.find("Linear layers in FP8") != std::string::npos)
                layers = e.message;
        }
        void onNumerics(const std::vector<run::NumericsRecord>& rows) override {
            for (const auto& r : rows)
                if (r.kind == run::NumericsKind::Cast)
                    casts.push_back(r);
        }
    } seen;
    run::CancelToken cancel;
    const auto out = train::trainRun(spec, 0, 1, seen, cancel);
    ASSERT_EQ(out.status, run::RunStatus::Finished) << out.error;
    EXPECT_NE(seen.layers.find("8 of 9 Linear layers in FP8"), std::string::npos) << seen.layers;
    ASSERT_FALSE(seen.casts.empty());
    for (const auto& c : seen.casts) {
        EXPECT_TRUE(std::isfinite(c.scale) && c.scale > 0) << c.name;
        EXPECT_EQ(c.format, c.name.find(":grad_output") != std::string::npos ? "e5m2" : "e4m3");
    }
    ASSERT_GE(seen.losses.size(), 40u);
    EXPECT_LT(seen.losses.back(), seen.losses.front()) << "it learns";
}

TEST(Fp8Cuda, AnFp8StepCapturesIntoACudaGraphWithNoHostRead) {
    REQUIRE_FP8();
    auto spec = test_cuda::cudaDecoderSpec(256, 2, 4, 64, 1024, 16, 30, Precision::Fp8);
    spec.arms[0].fp8_modules = "all";
    spec.arms[0].cuda_graph = true;
    struct Seen : run::TrainObserver {
        std::vector<std::string> warnings;
        int steps = 0;
        void onStep(const run::StepRecord&) override { ++steps; }
        void onEvent(const run::EventRecord& e) override {
            if (e.kind == run::EventKind::Warning)
                warnings.push_back(e.message);
        }
    } seen;
    run::CancelToken cancel;
    const auto out = train::trainRun(spec, 0, 1, seen, cancel);
    ASSERT_EQ(out.status, run::RunStatus::Finished) << out.error;
    EXPECT_EQ(seen.steps, 30);
    for (const auto& w : seen.warnings) {
        EXPECT_EQ(w.find("eager"), std::string::npos) << "the capture fell back: " << w;
    }
}

// The cast takes 16-byte loads where the input allows them and one value at a time
// where it does not (a view that starts mid-storage): both give the same bytes.
TEST(Fp8Cuda, AnInputThatIsNotAlignedCastsAsTheAlignedOneDoes) {
    REQUIRE_FP8();
    torch::manual_seed(5);
    auto net = std::make_shared<OneLinearImpl>(256, 256);
    net->to(test_cuda::kCuda);
    config::ArmSpec arm{"fp8", Precision::Fp8};
    arm.fp8_recipe = config::Fp8Recipe::Current;  // no state carried from one call to the next
    amp::Fp8Linears fp8(*net, arm, test_cuda::kCuda);
    net->setLinearHook(&fp8);
    const auto storage = at::randn({64 * 256 + 1}, at::device(test_cuda::kCuda));
    const auto misaligned = storage.narrow(0, 1, 64 * 256).view({64, 256});
    const auto aligned = misaligned.clone();
    ASSERT_NE(reinterpret_cast<uintptr_t>(misaligned.data_ptr()) % 16, 0u);
    at::NoGradGuard no_grad;
    autocast::AutocastGuard guard(c10::DeviceType::CUDA, at::kBFloat16, true, true);
    EXPECT_TRUE(at::equal(net->forward(misaligned), net->forward(aligned)));
}

// The kernels keep each tensor's scale as Fp8Scaling, the arithmetic the CPU tests
// check, says: over casts of known amax, with a history of 3 and a margin of 1, each
// cast's scale is the reference's (the first from its own amax, then delayed).
TEST(Fp8Cuda, TheKernelsScaleAsTheReferenceArithmeticDoes) {
    REQUIRE_FP8();
    auto net = std::make_shared<OneLinearImpl>(256, 256);
    net->to(test_cuda::kCuda);
    config::ArmSpec arm{"fp8", Precision::Fp8};
    arm.fp8_history = 3;
    arm.fp8_margin = 1;
    amp::Fp8Linears fp8(*net, arm, test_cuda::kCuda);
    net->setLinearHook(&fp8);
    auto ref = amp::Fp8Scaling::make(3, amp::kE4m3Max, 1, c10::kCPU);
    at::NoGradGuard no_grad;
    autocast::AutocastGuard guard(c10::DeviceType::CUDA, at::kBFloat16, true, true);
    int64_t step = 0;
    for (double amax : {2.0, 8.0, 1.0, 0.5, 0.5, 0.5, 4.0}) {
        const double want = ref.primed
                                ? at1(ref.scale)
                                : at1(amp::scaleFromAmax(one(amax), ref.scale, amp::kE4m3Max, 1));
        auto x = at::full({64, 256}, amax / 2, at::device(test_cuda::kCuda));
        x.index_put_({0, 0}, -amax);  // the amax, exactly
        fp8.countNextStep();
        net->forward(x);
        const auto records = fp8.takeCastRecords(++step);
        ASSERT_FALSE(records.empty());
        EXPECT_EQ(records[0].name, "fc:input");
        EXPECT_NEAR(records[0].scale, want, want * 1e-6) << "cast " << step << ", amax " << amax;
        ref.amax.fill_(amax);
        ref.push();
    }
}
