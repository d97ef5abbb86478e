// The fused kernels of fp16/bf16 arms checked against ATen's unfused path on this GPU,
// once per process, before the first run of such an arm trains (train/private/TaskHead.h).
#include <ATen/ATen.h>
#include <c10/util/accumulate.h>

#include <cmath>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "core/amp/HalfLinear.h"
#include "core/autocast/AutocastGuard.h"
#include "core/train/private/TaskHead.h"

namespace ampbench::train {

#ifdef AMPBENCH_WITH_CUDA
namespace {

/// Fixed values without the random generator (a run's seeded stream stays untouched):
/// a smooth wave of amplitude `scale` around `offset`.
at::Tensor wave(at::IntArrayRef sizes, double rate, double scale, double offset,
                const at::TensorOptions& opts) {
    return (at::arange(c10::multiply_integers(sizes), opts).mul(rate).sin() * scale + offset)
        .reshape(sizes);
}

/// How far `got` is from `want`, as a share of want's largest |value| (inf where got
/// is not finite).
double gap(const at::Tensor& got, const at::Tensor& want) {
    const auto g = got.to(at::kFloat), w = want.to(at::kFloat);
    if (!at::isfinite(g).all().item<bool>()) {
        return INFINITY;
    }
    const double largest = w.abs().max().item<double>();
    return (g - w).abs().max().item<double>() / std::max(largest, 1e-30);
}

struct Gap {
    std::string what;
    double share;
};

/// The LayerNorm before a Linear, fused (HalfLinears) against at::layer_norm then
/// at::linear under the same autocast: the output and the input's, the LayerNorm's
/// weight's and bias's gradients.
std::vector<Gap> layerNormGaps(c10::Device device, at::ScalarType dtype, int64_t cols) {
    const auto opts = at::TensorOptions().device(device);
    const auto x = wave({48, cols}, 0.731, 3.0, 0.5, opts);
    const auto gamma = wave({cols}, 0.37, 0.2, 1.0, opts);
    const auto beta = wave({cols}, 0.91, 0.1, 0.0, opts);
    const auto weight = wave({24, cols}, 0.53, 1.0 / std::sqrt(double(cols)), 0.0, opts);
    const auto bias = wave({24}, 1.3, 0.1, 0.0, opts);
    const auto grad = wave({48, 24}, 0.29, 1.0, 0.0, opts).to(dtype);
    std::vector<at::Tensor> out[2];
    for (const bool fused : {true, false}) {
        std::vector<at::Tensor> leaves;
        for (const auto& t : {x, gamma, beta}) {
            leaves.push_back(t.clone().requires_grad_());
        }
        at::Tensor y;
        {
            autocast::AutocastGuard autocast(c10::DeviceType::CUDA, dtype);
            if (fused) {
                amp::HalfLinears hook(dtype);
                y = hook.layerNormLinear(leaves[0], leaves[1], leaves[2], 1e-5, weight, bias);
            } else {
                y = at::linear(at::layer_norm(leaves[0], {cols}, leaves[1], leaves[2], 1e-5),
                               weight, bias);
            }
        }
        y.backward(grad);
        out[fused] = {y, leaves[0].grad(), leaves[1].grad(), leaves[2].grad()};
    }
    const std::string at = " (LayerNorm of " + std::to_string(cols) + ")";
    return {{"output" + at, gap(out[1][0], out[0][0])},
            {"input gradient" + at, gap(out[1][1], out[0][1])},
            {"weight gradient" + at, gap(out[1][2], out[0][2])},
            {"bias gradient" + at, gap(out[1][3], out[0][3])}};
}

/// The token loss over half-precision logits against float32 cross-entropy: the
/// value and the logits' gradient, some targets ignored.
std::vector<Gap> lossGaps(c10::Device device, at::ScalarType dtype) {
    const int64_t rows = 64, vocab = 1003;
    const auto opts = at::TensorOptions().device(device);
    auto logits = wave({rows, vocab}, 0.613, 4.0, 0.0, opts).to(dtype);
    auto target = at::arange(rows, opts.dtype(at::kLong)).mul(7).remainder(vocab);
    target.index_put_({at::indexing::Slice(0, 3)}, -100);
    logits.index_put_({0}, 100.0);  // ignored: its gradient is 0, not exp(100) · 0
    auto ours_in = logits.clone().requires_grad_();
    auto ref_in = logits.to(at::kFloat).requires_grad_();
    at::Tensor ours;
    {
        autocast::AutocastGuard autocast(c10::DeviceType::CUDA, dtype);
        ours = halfCrossEntropy(ours_in, target);
    }
    const auto ref = at::cross_entropy_loss(ref_in, target);
    ours.backward();
    ref.backward();
    return {{"loss", gap(ours, ref)}, {"logits gradient", gap(ours_in.grad(), ref_in.grad())}};
}

std::string check(c10::Device device) {
    for (const auto dtype : {at::kBFloat16, at::kHalf}) {
        const double tolerance = dtype == at::kHalf ? 1e-2 : 3e-2;
        std::vector<Gap> gaps = lossGaps(device, dtype);
        for (const int64_t cols : {200, 768}) {
            for (auto& g : layerNormGaps(device, dtype, cols)) {
                gaps.push_back(std::move(g));
            }
        }
        for (const auto& g : gaps) {
            if (!(g.share <= tolerance)) {
                std::ostringstream why;
                why << "the fused kernels are off for this process: on this GPU the fused "
                    << (dtype == at::kHalf ? "fp16 " : "bf16 ") << g.what << " differed from "
                    << "ATen's by " << g.share << " of its largest value (tolerance " << tolerance
                    << "); ATen's unfused kernels train instead";
                return why.str();
            }
        }
    }
    return {};
}

}  // namespace
#endif

std::string checkFusedKernels(c10::Device device) {
#ifdef AMPBENCH_WITH_CUDA
    // Once per process; every later run of it gets the same answer, so a run that
    // trains unfused because an earlier one's check failed says so too.
    static std::mutex mutex;
    static bool checked = false;
    static std::string verdict;
    if (!device.is_cuda()) {
        return {};
    }
    const std::lock_guard<std::mutex> lock(mutex);
    if (!checked && amp::fusedKernels()) {
        checked = true;
        try {
            verdict = check(device);
        } catch (const std::exception& e) {
            verdict = std::string(
                          "the fused kernels are off for this process: their check on "
                          "this GPU failed (") +
                      e.what() + "); ATen's unfused kernels train instead";
        }
        if (!verdict.empty()) {
            amp::setFusedKernels(false);
        }
    }
    return verdict;
#else
    (void)device;
    return {};
#endif
}

}  // namespace ampbench::train
