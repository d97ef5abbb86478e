// GPU-only checks. Each skips, saying so, where there is no CUDA device, so CI
// (CPU-only) stays green; bench/device.sh runs them on the H200.
#include <ATen/ATen.h>
#include <c10/util/Exception.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <vector>

#include "core/amp/HalfLinear.h"
#include "core/amp/LossScaler.h"
#include "core/autocast/AutocastGuard.h"
#include "core/config/ExperimentSpec.h"
#include "core/models/Registry.h"
#include "core/numerics/Fp16Numerics.h"
#include "core/numerics/NumericsTap.h"
#include "core/probe/Environment.h"
#include "core/probe/HostReadback.h"
#include "core/probe/MemoryProbe.h"
#include "core/probe/StepTimer.h"
#include "core/train/Trainer.h"
#include "core/train/private/ParameterUpdater.h"
#include "core/train/private/StepGraph.h"
#include "core/train/private/TaskHead.h"
#include "tests/core/CudaSpecs.h"

using namespace ampbench;

using namespace ampbench::test_cuda;

TEST(Cuda, FusedScalerMatchesPortable) {
    REQUIRE_CUDA();
    config::ScalerSpec o;
    o.init_scale = 1024.0;
    o.growth_interval = 2;
    amp::LossScaler fused(o, kCuda, false), portable(o, kCuda, true);
    ASSERT_TRUE(fused.fused());
    ASSERT_FALSE(portable.fused());
    for (bool inf : {false, false, true, false, false, false, true, true}) {
        auto g = at::randn({1000}, at::TensorOptions().device(kCuda)) * 1024.0;
        if (inf) {
            g[17] = std::numeric_limits<float>::infinity();
        }
        std::vector<at::Tensor> a = {g.clone()}, b = {g.clone()};
        fused.unscale(a);
        portable.unscale(b);
        ASSERT_EQ(fused.foundInf(), inf);
        ASSERT_EQ(portable.foundInf(), inf);
        if (!inf) {
            EXPECT_TRUE(at::equal(a[0], b[0]));
        }
        fused.update();
        portable.update();
        EXPECT_EQ(fused.scaleValue(), portable.scaleValue());
        EXPECT_EQ(fused.growthTracker(), portable.growthTracker());
    }
}

TEST(Cuda, AutocastFp16OnCuda) {
    REQUIRE_CUDA();
    auto a = at::randn({64, 64}, at::TensorOptions().device(kCuda));
    at::Tensor y;
    {
        autocast::AutocastGuard g(c10::DeviceType::CUDA, at::kHalf);
        y = at::matmul(a, a);
    }
    EXPECT_EQ(y.scalar_type(), at::kHalf);
    EXPECT_FALSE(autocast::AutocastGuard::isEnabled(c10::DeviceType::CUDA));
}

// The token loss under fp16 and bf16 autocast reads the half-precision logits without
// copying them to float32: the loss and the logits' gradient as autocast's cross-entropy
// gives them, fused (one kernel each way) and unfused. A vocabulary of odd width (rows
// start off any 8-byte boundary), ignored targets, and logits from a matmul.
TEST(Cuda, TheLossOfHalfPrecisionLogitsNeedsNoFloat32Copy) {
    REQUIRE_CUDA();
    const train::TaskHead head(config::Task::Tokens);
    const auto opts = at::TensorOptions().device(kCuda);
    const int64_t vocab = 5003;
    auto x = (at::randn({8, 64, 96}, opts) * 4).requires_grad_();
    const auto w = at::randn({96, vocab}, opts).div(10);
    auto y = at::randint(vocab, {8, 64}, opts.dtype(at::kLong));
    y.index_put_({0, at::indexing::Slice(0, 7)}, -100);  // ignored, as ATen ignores them
    for (const auto dtype : {at::kHalf, at::kBFloat16}) {
        for (const bool fused : {true, false}) {
            amp::setFusedKernels(fused);
            at::Tensor ours, theirs, g_ours, g_theirs;
            {
                autocast::AutocastGuard g(c10::DeviceType::CUDA, dtype);
                const auto logits = at::matmul(x, w);
                ASSERT_EQ(logits.scalar_type(), dtype);
                ASSERT_TRUE(train::autocastHalfLogits(logits));
                ours = head.loss(logits, y);
                theirs = at::cross_entropy_loss(logits.reshape({-1, vocab}).to(at::kFloat),
                                                y.reshape({-1}));
                x.mutable_grad() = at::Tensor();
                ours.backward({}, /*retain_graph=*/true);
                g_ours = x.grad().clone();
                x.mutable_grad().zero_();
                theirs.backward();
                g_theirs = x.grad().clone();
            }
            SCOPED_TRACE(std::string(dtype == at::kHalf ? "fp16" : "bf16") +
                         (fused ? ", fused" : ", unfused"));
            EXPECT_EQ(ours.scalar_type(), at::kFloat);
            EXPECT_NEAR(ours.item<double>(), theirs.item<double>(), 1e-5 * theirs.item<double>());
            const double scale = g_theirs.abs().max().item<double>();
            // The gradient reaches x through the logits' dtype either way.
            EXPECT_LE((g_ours - g_theirs).abs().max().item<double>(),
                      (dtype == at::kHalf ? 1e-2 : 3e-2) * scale);
        }
    }
    amp::setFusedKernels(true);
    EXPECT_FALSE(train::autocastHalfLogits(at::zeros({4, 4}, opts.dtype(at::kHalf))))
        << "outside autocast (pure fp16, the control) the loss stays in fp16";
}

// The fused loss at a decoder's shapes: every row's value against float32 log-softmax,
// a NaN logit gives a NaN loss (a diverged run is seen as such), and its gradient
// equals the float32 one's to the logits' rounding.
TEST(Cuda, TheFusedLossMatchesFloat32AtADecodersShapes) {
    REQUIRE_CUDA();
    const auto opts = at::TensorOptions().device(kCuda);
    const int64_t rows = 2048, vocab = 50257;
    auto logits = (at::randn({rows, vocab}, opts) * 3).to(at::kBFloat16).requires_grad_();
    const auto y = at::randint(vocab, {rows}, opts.dtype(at::kLong));
    at::Tensor ours;
    {
        autocast::AutocastGuard g(c10::DeviceType::CUDA, at::kBFloat16);
        ours = train::halfCrossEntropy(logits, y);
    }
    auto ref_in = logits.detach().to(at::kFloat).requires_grad_();
    const auto theirs = at::cross_entropy_loss(ref_in, y);
    EXPECT_NEAR(ours.item<double>(), theirs.item<double>(), 1e-5 * theirs.item<double>());
    ours.backward();
    theirs.backward();
    const auto diff = (logits.grad().to(at::kFloat) - ref_in.grad()).abs().max().item<double>();
    const double largest = ref_in.grad().abs().max().item<double>();
    EXPECT_LE(diff, 1e-2 * largest) << "largest gradient " << largest;
    std::printf("fused loss: %.6f against %.6f, gradient within %.2e of %.2e\n",
                ours.item<double>(), theirs.item<double>(), diff, largest);

    // An ignored row's gradient is zero whatever its logits (exp(100) overflows float32).
    auto large = logits.detach().clone();
    large.index_put_({3}, 100.0);
    large.requires_grad_();
    auto ignoring = y.clone();
    ignoring.index_put_({3}, -100);
    {
        autocast::AutocastGuard g(c10::DeviceType::CUDA, at::kBFloat16);
        train::halfCrossEntropy(large, ignoring).backward();
    }
    EXPECT_TRUE(at::isfinite(large.grad()).all().item<bool>());
    EXPECT_EQ(large.grad()[3].abs().max().item<double>(), 0.0);

    auto bad = logits.detach().clone();
    bad.index_put_({5, 7}, std::numeric_limits<float>::quiet_NaN());
    autocast::AutocastGuard g(c10::DeviceType::CUDA, at::kBFloat16);
    EXPECT_TRUE(std::isnan(train::halfCrossEntropy(bad, y).item<double>()));
}

// The LayerNorm before a Linear under fp16 and bf16 autocast, fused (one kernel writes
// the normalised rows in the Linear's dtype; one reads that dtype's gradient back)
// against ATen's LayerNorm in float32 then autocast's cast: the Linear's output and the
// gradients of the input, the LayerNorm's weight and bias and the Linear's, at a
// decoder's width, an odd one and the widest the kernel takes.
TEST(Cuda, TheFusedLayerNormMatchesLayerNormThenLinearUnderAutocast) {
    REQUIRE_CUDA();
    const auto opts = at::TensorOptions().device(kCuda);
    const char* const names[] = {"output",    "input grad",  "gamma grad",
                                 "beta grad", "weight grad", "bias grad"};
    for (const auto dtype : {at::kBFloat16, at::kHalf}) {
        for (const int64_t cols : {768, 200, 2048}) {
            const auto x = at::randn({4, 64, cols}, opts) * 3 + 1;
            const auto gamma = at::randn({cols}, opts) * 0.2 + 1;
            const auto beta = at::randn({cols}, opts) * 0.1;
            const auto weight = at::randn({96, cols}, opts) / std::sqrt(double(cols));
            const auto bias = at::randn({96}, opts) * 0.1;
            const auto grad_out = at::randn({4, 64, 96}, opts).to(dtype);
            std::vector<at::Tensor> got[2];
            int64_t fused_norms = 0;
            for (const bool fused : {true, false}) {
                amp::setFusedKernels(fused);
                std::vector<at::Tensor> leaves;
                for (const auto& t : {x, gamma, beta, weight, bias}) {
                    leaves.push_back(t.clone().requires_grad_());
                }
                amp::HalfLinears hook(dtype);
                at::Tensor out;
                {
                    autocast::AutocastGuard g(c10::DeviceType::CUDA, dtype);
                    out = hook.layerNormLinear(leaves[0], leaves[1], leaves[2], 1e-5, leaves[3],
                                               leaves[4]);
                }
                EXPECT_EQ(out.scalar_type(), dtype);
                out.backward(grad_out);
                got[fused] = {out.to(at::kFloat)};
                for (const auto& l : leaves) {
                    got[fused].push_back(l.grad());
                }
                if (fused) {
                    fused_norms = hook.fusedNorms();
                }
            }
            amp::setFusedKernels(true);
            SCOPED_TRACE(std::string(dtype == at::kHalf ? "fp16, " : "bf16, ") +
                         std::to_string(cols) + " columns");
            EXPECT_EQ(fused_norms, 1) << "the fused kernels ran";
            for (size_t i = 0; i < got[0].size(); ++i) {
                ASSERT_TRUE(got[1][i].defined()) << names[i];
                EXPECT_EQ(got[1][i].scalar_type(), got[0][i].scalar_type()) << names[i];
                const double scale = got[0][i].abs().max().item<double>();
                const double diff = (got[1][i] - got[0][i]).abs().max().item<double>();
                EXPECT_LE(diff, (dtype == at::kHalf ? 1e-2 : 3e-2) * scale) << names[i];
            }
        }
    }
}

// The check every process makes before its first autocast run on a GPU passes here;
// where it did not, the fused kernels would be off and the runs would say why.
TEST(Cuda, TheFusedKernelsPassTheirOwnCheckOnThisGpu) {
    REQUIRE_CUDA();
    EXPECT_EQ(train::checkFusedKernels(kCuda), "");
    EXPECT_TRUE(amp::fusedKernels());
}

// A decoder trained under bf16 autocast with the fused kernels (LayerNorm and loss) and
// without: the same seed, the same batches, the loss step for step within bf16's
// rounding.
TEST(Cuda, ADecoderTrainsAlikeWithTheFusedKernelsAndWithout) {
    REQUIRE_CUDA();
    struct Losses : run::TrainObserver {
        std::vector<double> v;
        void onStep(const run::StepRecord& r) override { v.push_back(r.loss); }
    };
    Losses losses[2];
    for (const bool fused : {true, false}) {
        amp::setFusedKernels(fused);
        auto spec = cudaDecoderSpec(256, 2, 4, 128, 1000, 16, 30, config::Precision::AmpBf16);
        run::CancelToken cancel;
        const auto out = train::trainRun(spec, 0, 1, losses[fused], cancel);
        ASSERT_EQ(out.status, run::RunStatus::Finished) << out.error;
    }
    amp::setFusedKernels(true);
    ASSERT_EQ(losses[0].v.size(), losses[1].v.size());
    ASSERT_GE(losses[1].v.size(), 30u);
    double worst = 0;
    for (size_t i = 0; i < losses[0].v.size(); ++i) {
        worst = std::max(worst, std::abs(losses[1].v[i] - losses[0].v[i]) / losses[0].v[i]);
    }
    std::printf("fused kernels: largest relative loss difference over %zu steps %.3g\n",
                losses[0].v.size(), worst);
    EXPECT_LE(worst, 0.02);
    EXPECT_LT(losses[1].v.back(), losses[1].v.front()) << "it learns";
}

TEST(Cuda, AllocatorStatisticsSeeAnAllocation) {
    REQUIRE_CUDA();
    probe::MemoryProbe probe(kCuda);
    probe.releaseCache();
    ASSERT_TRUE(probe.resetPeak());
    auto before = probe.sample();
    {
        auto t = at::empty({256, 1024, 1024}, at::TensorOptions().device(kCuda));  // 1 GiB
        auto during = probe.sample();
        EXPECT_GE(during.allocated - before.allocated, int64_t(1) << 30);
        EXPECT_GE(during.reserved, during.allocated);
    }
    auto after = probe.sample();
    EXPECT_GE(after.peak - before.allocated, int64_t(1) << 30) << "the peak remembers it";
    EXPECT_LT(after.allocated - before.allocated, int64_t(1) << 20);
}

TEST(Cuda, EventTimingMeasuresDeviceWork) {
    REQUIRE_CUDA();
    probe::StepTimer timer(kCuda);
    ASSERT_TRUE(timer.usesDeviceEvents());
    auto a = at::randn({4096, 4096}, at::TensorOptions().device(kCuda));
    for (int i = 0; i < 3; ++i) {
        at::matmul(a, a);  // warm-up
    }
    for (int reps : {1, 8}) {
        timer.start();
        for (int i = 0; i < reps; ++i) {
            at::matmul(a, a);
        }
        timer.stop();
    }
    auto ms = timer.collect();
    ASSERT_EQ(ms.size(), 2u);
    EXPECT_GT(ms[0], 0.0);
    EXPECT_GT(ms[1], 4.0 * ms[0]) << "eight products take longer than one";
}

// A read-back waits for its own copy, not for the work queued after it: taken while a
// long product is still on the device, it has the values posted before.
TEST(Cuda, HostReadbackWaitsOnlyForItsCopy) {
    REQUIRE_CUDA();
    probe::HostReadback readback;
    auto a = at::randn({8192, 8192}, at::TensorOptions().device(kCuda));
    at::matmul(a, a);  // warm-up
    auto flags = at::tensor({1.0f, 65536.0f}, at::TensorOptions().device(kCuda));
    readback.post(flags * 2);
    ASSERT_TRUE(readback.pending());
    probe::StepTimer timer(kCuda);
    timer.mark();
    for (int i = 0; i < 20; ++i) {
        a = at::matmul(a, a) / 8192.0;
    }
    timer.mark();
    const auto values = readback.take();
    const bool queued_work_left = !timer.markerReached();
    ASSERT_EQ(values.size(), 2u);
    EXPECT_EQ(values[0], 2.0);
    EXPECT_EQ(values[1], 131072.0);
    EXPECT_FALSE(readback.pending());
    EXPECT_TRUE(readback.take().empty());
    EXPECT_TRUE(queued_work_left) << "the products queued after the copy were waited for";
}

// Back-to-back steps share an event: work queued between two steps counts in the
// second one unless the chain was broken (an evaluation, a read-back).
TEST(Cuda, ChainedStepsCountTheGapUnlessTheChainBreaks) {
    REQUIRE_CUDA();
    probe::StepTimer timer(kCuda);
    auto a = at::randn({4096, 4096}, at::TensorOptions().device(kCuda));
    for (int i = 0; i < 3; ++i) {
        at::matmul(a, a);  // warm-up
    }
    auto step = [&] {
        timer.start();
        at::matmul(a, a);
        timer.stop();
    };
    auto gap = [&] {
        for (int i = 0; i < 8; ++i) {
            at::matmul(a, a);
        }
    };
    step();
    gap();
    step();  // chained: starts at the first step's stop, so the gap is in it
    timer.breakChain();
    gap();
    step();  // its own start: the gap is not in it
    auto ms = timer.collect();
    ASSERT_EQ(ms.size(), 3u);
    EXPECT_GT(ms[1], 4.0 * ms[0]);
    EXPECT_LT(ms[2], 3.0 * ms[0]);
    // After a collect the next step starts anew, so nothing before it counts.
    const double one = ms[0];
    gap();
    step();
    ms = timer.collect();
    ASSERT_EQ(ms.size(), 1u);
    EXPECT_LT(ms[0], 3.0 * one);
}

TEST(Cuda, RecoversFromOutOfMemoryInProcess) {
    REQUIRE_CUDA();
    probe::MemoryProbe probe(kCuda);
    bool caught = false;
    try {
        // Far more than any GPU has: 4 TiB.
        auto t = at::empty({int64_t(1) << 40}, at::TensorOptions().device(kCuda));
    } catch (const c10::OutOfMemoryError&) {
        caught = true;
    }
    EXPECT_TRUE(caught);
    probe.releaseCache();
    auto t = at::ones({1024, 1024}, at::TensorOptions().device(kCuda));
    EXPECT_EQ(t.sum().item<double>(), 1024.0 * 1024.0) << "the process goes on";
}

// The fused updaters (ATen's multi-tensor kernels) give LibTorch's optimizers'
// results, and skip on the device when found_inf is set.
TEST(Cuda, FusedUpdatersMatchLibTorchOptimizers) {
    REQUIRE_CUDA();
    if (!train::fusedUpdaterAvailable(kCuda)) {
        GTEST_SKIP() << "this LibTorch has no fused optimizer kernels (needs 2.x)";
    }
    // SGD with momentum, SGD without (the fused kernel then takes no buffers), AdamW.
    const std::pair<config::OptimizerKind, double> cases[] = {{config::OptimizerKind::Sgd, 0.9},
                                                              {config::OptimizerKind::Sgd, 0.0},
                                                              {config::OptimizerKind::AdamW, 0.9}};
    for (auto [kind, momentum] : cases) {
        config::OptimizerSpec spec;
        spec.kind = kind;
        spec.momentum = momentum;
        spec.weight_decay = 0.01;
        auto make = [] {
            at::manual_seed(11);
            return std::vector<at::Tensor>{
                at::randn({64, 32}, at::TensorOptions().device(kCuda)).requires_grad_(),
                at::randn({32}, at::TensorOptions().device(kCuda)).requires_grad_()};
        };
        auto a = make(), b = make();
        auto fused = train::makeUpdater(a, spec, 0.01, kCuda, true);
        auto plain = train::makeUpdater(b, spec, 0.01, kCuda, false);
        ASSERT_TRUE(fused->skipsOnDevice());
        ASSERT_FALSE(plain->skipsOnDevice());
        auto no_inf = at::zeros({1}, at::TensorOptions().device(kCuda));
        auto inf = at::ones({1}, at::TensorOptions().device(kCuda));
        for (int step = 0; step < 4; ++step) {
            at::manual_seed(100 + step);
            std::vector<at::Tensor> g = {at::randn({64, 32}, at::TensorOptions().device(kCuda)),
                                         at::randn({32}, at::TensorOptions().device(kCuda))};
            for (size_t i = 0; i < 2; ++i) {
                a[i].mutable_grad() = g[i].clone();
                b[i].mutable_grad() = g[i].clone();
            }
            bool skip = step == 2;
            fused->step(skip ? inf : no_inf);
            if (!skip) {
                plain->step(at::Tensor());
            }
        }
        for (size_t i = 0; i < 2; ++i) {
            EXPECT_TRUE(at::allclose(a[i], b[i], 1e-4, 1e-5))
                << config::toString(kind) << " momentum " << momentum << " parameter " << i
                << " max diff " << (a[i] - b[i]).abs().max().item<double>();
        }
    }
}

namespace {
struct LastParams : run::TrainObserver {
    int64_t skipped = 0;
    std::vector<double> losses;
    void onStep(const run::StepRecord& s) override {
        skipped += s.skipped;
        losses.push_back(s.loss);
    }
};
}  // namespace

// The step replayed from a CUDA graph trains exactly like the eager step.
TEST(Cuda, GraphStepMatchesEagerStep) {
    REQUIRE_CUDA();
    if (!train::StepGraph::available()) {
        GTEST_SKIP() << "CUDA graphs need LibTorch 2.x with CUDA";
    }
    for (auto precision : {config::Precision::Fp32, config::Precision::AmpFp16}) {
        config::ExperimentSpec s;
        s.model.name = "mlp";
        s.model.width = 64;
        s.model.depth = 2;
        s.data.name = "synthetic-images";
        s.data.channels = 1;
        s.data.height = s.data.width = 16;
        s.micro_batch = 32;
        s.micro_steps = 12;
        s.eval_interval = 0;
        s.eval_batches = 1;
        s.device = config::DeviceKind::Cuda;
        s.arms = {{"a", precision}};
        s.arms[0].scaler.init_scale =
            16777216.0;  // 2^24: the first steps overflow fp16 and back off
        std::vector<double> eager_p, graph_p;
        LastParams eager_obs, graph_obs;
        run::CancelToken cancel;
        train::TrainOptions o1, o2;
        o1.parameters_out = &eager_p;
        o2.parameters_out = &graph_p;
        auto r1 = train::trainRun(s, 0, 3, eager_obs, cancel, o1);
        s.arms[0].cuda_graph = true;
        auto r2 = train::trainRun(s, 0, 3, graph_obs, cancel, o2);
        ASSERT_EQ(r1.status, run::RunStatus::Finished) << r1.error;
        ASSERT_EQ(r2.status, run::RunStatus::Finished) << r2.error;
        ASSERT_EQ(eager_p.size(), graph_p.size());
        double max_diff = 0;
        for (size_t i = 0; i < eager_p.size(); ++i) {
            max_diff = std::max(max_diff, std::abs(eager_p[i] - graph_p[i]));
        }
        EXPECT_LT(max_diff, 1e-4) << config::toString(precision);
        EXPECT_EQ(eager_obs.skipped, graph_obs.skipped);
        if (precision == config::Precision::AmpFp16) {
            EXPECT_GT(graph_obs.skipped, 0) << "2^24 overflows fp16 gradients";
        }
    }
}

// A graph run gives back all it allocated: a run after it (graph or eager) starts
// from the same allocated bytes and reaches the same peak. (With a new capture
// stream per graph, LibTorch's per-stream cuBLAS workspace stayed behind each
// time, about 64 MiB, and every later cell of a benchmark counted it.)
TEST(Cuda, GraphRunsLeaveNoMemoryBehind) {
    REQUIRE_CUDA();
    if (!train::StepGraph::available()) {
        GTEST_SKIP() << "CUDA graphs need LibTorch 2.x with CUDA";
    }
    auto s = cudaCnnSpec(8, config::Precision::AmpFp16);
    struct Peak : run::TrainObserver {
        int64_t peak = 0;
        void onStep(const run::StepRecord& r) override { peak = std::max(peak, r.mem_peak); }
    };
    probe::MemoryProbe probe(kCuda);
    run::CancelToken cancel;
    auto run = [&](bool graph) {
        s.arms[0].cuda_graph = graph;
        Peak p;
        auto r = train::trainRun(s, 0, 1, p, cancel);
        EXPECT_EQ(r.status, run::RunStatus::Finished) << r.error;
        return std::make_pair(p.peak, probe.sample().allocated);
    };
    run(true);  // the capture stream's workspace is made here, once per process
    auto [eager_peak, after_eager] = run(false);
    auto [graph_peak, after_graph] = run(true);
    auto [graph_peak2, after_graph2] = run(true);
    auto [eager_peak2, after_eager2] = run(false);
    EXPECT_EQ(after_graph, after_eager);
    EXPECT_EQ(after_graph2, after_graph);
    EXPECT_EQ(after_eager2, after_eager);
    EXPECT_EQ(graph_peak2, graph_peak);
    EXPECT_EQ(eager_peak2, eager_peak);
}

// The gradient norm is thinned only where its host time costs the step: with a
// budget nothing meets, the launch-bound CNN (the device waits for the host)
// records it every k-th step and says so; a device-bound decoder keeps it on every
// step, its host time being hidden behind the device's work.
TEST(Cuda, GradientNormIsThinnedOnlyWhereTheHostSetsThePace) {
    REQUIRE_CUDA();
    struct Norms : run::TrainObserver {
        int64_t steps = 0, with_norm = 0;
        bool said = false;
        void onStep(const run::StepRecord& r) override {
            ++steps;
            with_norm += std::isfinite(r.grad_norm) ? 1 : 0;
        }
        void onEvent(const run::EventRecord& e) override {
            said = said || e.message.find("gradient norm recorded every") != std::string::npos;
        }
    };
    train::TrainOptions o;
    o.grad_norm_limit = 1e-9;  // no norm meets it
    o.grad_norm_budget = 1e-9;
    run::CancelToken cancel;

    auto cnn = cudaCnnSpec(30, config::Precision::Fp32);
    Norms small;
    auto r = train::trainRun(cnn, 0, 1, small, cancel, o);
    ASSERT_EQ(r.status, run::RunStatus::Finished) << r.error;
    EXPECT_TRUE(small.said);
    EXPECT_LT(small.with_norm, small.steps);

    // About 6 TFLOP per step in fp32 against ~1,000 kernel launches.
    auto big = cudaDecoderSpec(1024, 8, 16, 1024, 8192, 8, 14, config::Precision::Fp32);
    Norms large;
    r = train::trainRun(big, 0, 1, large, cancel, o);
    ASSERT_EQ(r.status, run::RunStatus::Finished) << r.error;
    EXPECT_FALSE(large.said);
    EXPECT_EQ(large.with_norm, large.steps);
}

// Checkpointing on the GPU: same gradients, less peak memory.
TEST(Cuda, CheckpointingMatchesAndSavesMemory) {
    REQUIRE_CUDA();
    auto s = cudaDecoderSpec(256, 6, 4, 512, 1024, 16, 3, config::Precision::AmpBf16);
    // Plain SGD: parameters move by lr × gradient, so equal gradients give equal
    // parameters. (Adam moves a near-zero gradient's element by ±lr whatever its
    // size, so bf16 rounding alone could flip it by 2·lr per step.)
    s.optimizer.kind = config::OptimizerKind::Sgd;
    s.optimizer.momentum = 0;
    s.optimizer.lr = 0.05;
    struct Peak : run::TrainObserver {
        int64_t peak = 0;
        void onStep(const run::StepRecord& r) override { peak = std::max(peak, r.mem_peak); }
    };
    std::vector<double> p_plain, p_ckpt;
    Peak plain, ckpt;
    run::CancelToken cancel;
    train::TrainOptions o1, o2;
    o1.parameters_out = &p_plain;
    o2.parameters_out = &p_ckpt;
    auto r = train::trainRun(s, 0, 5, plain, cancel, o1);
    ASSERT_EQ(r.status, run::RunStatus::Finished) << r.error;
    s.arms[0].checkpointing = true;
    r = train::trainRun(s, 0, 5, ckpt, cancel, o2);
    ASSERT_EQ(r.status, run::RunStatus::Finished) << r.error;
    double max_diff = 0;
    for (size_t i = 0; i < p_plain.size(); ++i) {
        max_diff = std::max(max_diff, std::abs(p_plain[i] - p_ckpt[i]));
    }
    EXPECT_LT(max_diff, 1e-3);
    EXPECT_LT(ckpt.peak, plain.peak) << "checkpointing keeps fewer activations";
}

// The negative controls: the model itself in fp16 (no fp32 master weights), and fp16
// autocast without loss scaling. Both train on the GPU; neither records a loss scale.
TEST(Cuda, NegativeControlsRunWithoutMasterWeightsOrScaling) {
    REQUIRE_CUDA();
    auto spec = cudaCnnSpec(12, config::Precision::PureFp16);
    spec.arms.push_back({"noscale", config::Precision::AmpFp16});
    spec.arms.back().loss_scaling = false;
    for (int arm = 0; arm < 2; ++arm) {
        struct Seen : run::TrainObserver {
            std::vector<run::StepRecord> steps;
            std::vector<run::EventRecord> events;
            void onStart(const run::RunInfo&) override {}
            void onStep(const run::StepRecord& s) override { steps.push_back(s); }
            void onEval(const run::EvalRecord&) override {}
            void onEvent(const run::EventRecord& e) override { events.push_back(e); }
            void onFinish(const run::RunOutcome&) override {}
        } seen;
        run::CancelToken cancel;
        std::vector<double> params;
        train::TrainOptions options;
        options.parameters_out = &params;
        auto out = train::trainRun(spec, arm, 1, seen, cancel, options);
        ASSERT_EQ(out.status, run::RunStatus::Finished) << out.error;
        ASSERT_EQ(seen.steps.size(), 12u);
        for (const auto& e : seen.events) {
            EXPECT_EQ(e.message.find("dynamic loss scaling"), std::string::npos) << arm;
        }
        if (arm == 0) {
            // Every weight was rounded to fp16: representable in half precision.
            for (double p : params) {
                ASSERT_EQ(static_cast<double>(static_cast<float>(c10::Half(static_cast<float>(p)))),
                          p);
            }
        }
    }
}

// Deterministic mode on the GPU: cuDNN's deterministic algorithms, no benchmark, the
// cuBLAS workspace fixed: the same seed repeats every loss bit for bit.
TEST(Cuda, DeterministicRunsRepeatEveryLossBitForBit) {
    REQUIRE_CUDA();
    auto spec = cudaCnnSpec(30, config::Precision::AmpFp16);
    spec.deterministic = true;
    auto train = [&] {
        struct Seen : run::TrainObserver {
            std::vector<double> losses;
            void onStart(const run::RunInfo&) override {}
            void onStep(const run::StepRecord& s) override { losses.push_back(s.loss); }
            void onEval(const run::EvalRecord&) override {}
            void onEvent(const run::EventRecord&) override {}
            void onFinish(const run::RunOutcome&) override {}
        } seen;
        run::CancelToken cancel;
        auto out = train::trainRun(spec, 0, 3, seen, cancel, {});
        EXPECT_EQ(out.status, run::RunStatus::Finished) << out.error;
        return seen.losses;
    };
    const auto first = train();
    const auto again = train();
    ASSERT_EQ(first.size(), 30u);
    ASSERT_EQ(again.size(), first.size());
    for (size_t i = 0; i < first.size(); ++i) {
        ASSERT_EQ(std::memcmp(&first[i], &again[i], sizeof(double)), 0)
            << "step " << i + 1 << ": " << first[i] << " vs " << again[i];
    }
}

// The fused statistics kernel gives the records the ATen operations give, for the
// three dtypes, aligned or not, dense in any layout, with zeros, subnormals, inf and
// NaN, and a loss scale's multiplier; mixed with a tensor it cannot read (float64).
TEST(Cuda, FusedNumericsMatchAtenOperations) {
    REQUIRE_CUDA();
    at::manual_seed(7);
    const auto opts = at::TensorOptions().device(kCuda);
    // Magnitudes from 2^-40 to about 2^16 (a few overflow fp16), exact zeros.
    auto base = at::randn({1000003}, opts) * at::exp2(at::randint(-40, 15, {1000003}, opts));
    base.index_put_({at::arange(0, 1000003, 97, opts.dtype(at::kLong))}, 0.0);
    std::vector<std::pair<std::string, at::Tensor>> tensors;
    for (auto dtype : {at::kFloat, at::kHalf, at::kBFloat16}) {
        const auto t = base.to(dtype);
        const std::string name = numerics::dtypeName(dtype);
        tensors.emplace_back(name, t);
        tensors.emplace_back(name + " unaligned", t.narrow(0, 1, 999999));
        tensors.emplace_back(name + " 7", t.narrow(0, 3, 7));
        tensors.emplace_back(name + " one", t.narrow(0, 5, 1));
        tensors.emplace_back(name + " channels-last",
                             t.narrow(0, 0, 4 * 8 * 16 * 16)
                                 .view({4, 8, 16, 16})
                                 .contiguous(at::MemoryFormat::ChannelsLast));
        tensors.emplace_back(name + " transposed", t.narrow(0, 0, 600 * 700).view({600, 700}).t());
        tensors.emplace_back(name + " strided",
                             t.narrow(0, 0, 20000).view({100, 200}).narrow(1, 0, 150));
        auto bad = t.narrow(0, 0, 5000).clone();
        bad.index_put_({17}, std::numeric_limits<float>::infinity());
        bad.index_put_({4000}, std::nanf(""));
        tensors.emplace_back(name + " non-finite", bad);
        tensors.emplace_back(name + " float64", t.narrow(0, 0, 999).to(at::kDouble));
    }
    // Every format, power-of-two multipliers and an FP8 layer's arbitrary scale (whose
    // limits are no powers of two).
    for (const auto& format : run::numberFormats()) {
        for (double multiplier : {1.0, 1024.0, 1.0 / 65536.0, 448.0 / 3.7}) {
            numerics::Observation fused(run::NumericsKind::Grad, 1, multiplier, 1.0, format,
                                        numerics::Kernels::Fused);
            numerics::Observation aten(run::NumericsKind::Grad, 1, multiplier, 1.0, format,
                                       numerics::Kernels::Aten);
            for (const auto& [name, t] : tensors) {
                fused.add(name, t);
                aten.add(name, t);
            }
            const auto a = fused.finish(), b = aten.finish();
            ASSERT_EQ(a.size(), b.size());
            for (size_t i = 0; i < a.size(); ++i) {
                SCOPED_TRACE(a[i].name + ", " + format.name + ", multiplier " +
                             std::to_string(multiplier));
                EXPECT_EQ(a[i].numel, b[i].numel);
                EXPECT_EQ(a[i].nonfinite, b[i].nonfinite);
                EXPECT_EQ(a[i].absmax, b[i].absmax);
                EXPECT_EQ(a[i].underflow_subnormal, b[i].underflow_subnormal);
                EXPECT_EQ(a[i].underflow_normal, b[i].underflow_normal);
                EXPECT_EQ(a[i].saturated, b[i].saturated);
                EXPECT_EQ(a[i].headroom_log2, b[i].headroom_log2);
                EXPECT_EQ(a[i].format, format.name);
            }
            EXPECT_EQ(a[tensors.size() - 2].nonfinite, 2);
            // Magnitudes reach 2^14 and more, so a scaled 2^14 past twice the largest
            // saturates some.
            if (16384.0 * multiplier > 2.0 * format.largest) {
                EXPECT_GT(a[0].saturated, 0.0) << format.name << ", multiplier " << multiplier;
            }
            if (format.smallest_subnormal > 1e-30 && multiplier <= 1024.0) {
                EXPECT_GT(a[0].underflow_subnormal, 0.0);  // and down to 2^-40 under it
            }
        }
    }
}

// Attention scores without the 1/sqrt(d) overflow fp16 once the weights are large; the
// same attention as an FP32 island does not, nor does the scaled one.
TEST(Cuda, UnscaledAttentionOverflowsFp16UnlessItIsAnIsland) {
    REQUIRE_CUDA();
    at::manual_seed(3);
    config::ModelSpec spec;
    spec.name = "transformer";
    spec.width = 256;
    spec.depth = 1;
    spec.heads = 4;  // head size 64
    spec.init_std = 3.0;
    data::InputShape shape;
    shape.seq_len = 256;
    shape.vocab = 512;
    const auto tokens =
        at::randint(0, 512, {4, 256}, at::TensorOptions().device(kCuda).dtype(at::kLong));
    auto attn = [&](const std::string& attention, const std::string& islands) {
        spec.attention = attention;
        auto model = models::makeModel(spec, shape);
        model->to(kCuda);
        numerics::NumericsTap tap(numerics::splitPatterns(islands));
        model->setTap(&tap);
        tap.observe(1, 1.0);
        {
            autocast::AutocastGuard autocast(c10::DeviceType::CUDA, at::kHalf);
            model->forward(tokens);
        }
        for (auto& r : tap.takeObservation().value().finish()) {
            if (r.name == "blocks.0.attn") {
                return r;
            }
        }
        ADD_FAILURE() << "no record of blocks.0.attn";
        return run::NumericsRecord{};
    };
    const auto unscaled = attn("unscaled", "");
    EXPECT_EQ(unscaled.dtype, "float16");
    EXPECT_GT(unscaled.nonfinite, 0);
    const auto island = attn("unscaled", "blocks.*.attn");
    EXPECT_EQ(island.dtype, "float32");
    EXPECT_EQ(island.nonfinite, 0);
    const auto scaled = attn("scaled", "");
    EXPECT_EQ(scaled.dtype, "float16");
    EXPECT_EQ(scaled.nonfinite, 0);
}
