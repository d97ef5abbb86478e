#include "core/train/private/TaskHead.h"

#include <ATen/ATen.h>
#include <c10/core/impl/LocalDispatchKeySet.h>

#include "core/amp/HalfLinear.h"
#include "core/autocast/AutocastGuard.h"

#ifdef AMPBENCH_WITH_CUDA
#include <c10/cuda/CUDAStream.h>
#include <torch/csrc/autograd/custom_function.h>

#include "core/train/CrossEntropyCuda.h"
#endif

namespace ampbench::train {

using config::Task;

Task resolveTask(const config::ExperimentSpec& spec, const data::InputShape& shape) {
    if (spec.model.task != Task::Auto) {
        return spec.model.task;
    }
    if (spec.model.name == "transformer") {
        return Task::Tokens;
    }
    if (shape.float_target) {
        return Task::Regression;
    }
    if (shape.tokens() || (!shape.target.empty() && shape.target == shape.sample)) {
        return Task::Tokens;
    }
    return Task::Classification;
}

at::Tensor TaskHead::asTarget(const at::Tensor& output, const at::Tensor& target) const {
    if (output.dim() == target.dim() + 1 && output.size(-1) == 1) {
        return output.squeeze(-1);
    }
    return output;
}

at::Tensor TaskHead::loss(const at::Tensor& output, const at::Tensor& target) const {
    if (task_ == Task::Regression) {
        return at::mse_loss(asTarget(output, target).to(at::kFloat), target.to(at::kFloat));
    }
    const auto logits = output.reshape({-1, output.size(-1)});
    const auto y = target.reshape({-1});
    if (autocastHalfLogits(logits) && smoothing_ == 0.0) {
        return halfCrossEntropy(logits, y);
    }
    return at::cross_entropy_loss(logits, y, {}, at::Reduction::Mean, /*ignore_index=*/-100,
                                  smoothing_);
}

bool autocastHalfLogits(const at::Tensor& logits) {
    return logits.is_cuda() &&
           (logits.scalar_type() == at::kHalf || logits.scalar_type() == at::kBFloat16) &&
           autocast::AutocastGuard::isEnabled(c10::DeviceType::CUDA);
}

namespace {

#ifdef AMPBENCH_WITH_CUDA
constexpr int64_t kIgnoreIndex = -100;

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

/// The fused cross-entropy: forward saves each row's log Σ exp (4 bytes a row), not
/// the log-probabilities; backward recomputes them from the logits it reads once.
class HalfCrossEntropy : public torch::autograd::Function<HalfCrossEntropy> {
  public:
    static at::Tensor forward(AutogradContext* ctx, at::Tensor logits, at::Tensor target) {
        const auto rows = logits.size(0), cols = logits.size(1);
        const auto dtype =
            logits.scalar_type() == at::kBFloat16 ? cuda::Logits::BFloat16 : cuda::Logits::Half;
        auto t = target.to(at::kLong).contiguous();
        auto f = logits.options().dtype(at::kFloat);
        auto loss = at::empty({rows}, f), lse = at::empty({rows}, f);
        cuda::crossEntropyForward(logits.data_ptr(), dtype, rows, cols, logits.stride(0),
                                  t.data_ptr<int64_t>(), kIgnoreIndex, loss.data_ptr<float>(),
                                  lse.data_ptr<float>(),
                                  c10::cuda::getCurrentCUDAStream().stream());
        // The mean over the counted targets, as ATen's (NaN where none are counted).
        const auto count = t.ne(kIgnoreIndex).sum().to(at::kFloat);
        ctx->save_for_backward({logits, t, lse, count});
        return loss.sum() / count;
    }
    static variable_list backward(AutogradContext* ctx, variable_list grads) {
        const auto saved = ctx->get_saved_variables();
        const at::Tensor &logits = saved[0], &t = saved[1], &lse = saved[2], &count = saved[3];
        const auto scale = (grads[0].to(at::kFloat) / count).contiguous();
        auto grad = at::empty({logits.size(0), logits.size(1)}, logits.options());
        cuda::crossEntropyBackward(
            logits.data_ptr(),
            logits.scalar_type() == at::kBFloat16 ? cuda::Logits::BFloat16 : cuda::Logits::Half,
            logits.size(0), logits.size(1), logits.stride(0), t.data_ptr<int64_t>(), kIgnoreIndex,
            lse.data_ptr<float>(), scale.data_ptr<float>(), grad.data_ptr(),
            c10::cuda::getCurrentCUDAStream().stream());
        return {grad, at::Tensor()};
    }
};
#endif

}  // namespace

at::Tensor halfCrossEntropy(const at::Tensor& logits, const at::Tensor& target) {
    c10::impl::ExcludeDispatchKeyGuard no_autocast(c10::autocast_dispatch_keyset);
#ifdef AMPBENCH_WITH_CUDA
    if (amp::fusedKernels() && logits.stride(1) == 1) {
        return HalfCrossEntropy::apply(logits, target);
    }
#endif
    if (logits.scalar_type() == at::kHalf) {
        // log-softmax reads the fp16 logits and computes and writes in float32
        // (half_to_float); its backward writes the gradient in the logits' dtype.
        const auto log_probs = at::_log_softmax(logits, 1, /*half_to_float=*/true);
        return at::nll_loss(log_probs, target, {}, at::Reduction::Mean, /*ignore_index=*/-100);
    }
    // bf16: ATen's log-softmax takes no half_to_float for it; autocast's float32 copy.
    return at::cross_entropy_loss(logits.to(at::kFloat), target, {}, at::Reduction::Mean,
                                  /*ignore_index=*/-100);
}

void TaskHead::accumulate(const at::Tensor& output, const at::Tensor& target, Sums& sums) const {
    at::Tensor loss, correct;
    int64_t count = 0;
    if (task_ == Task::Regression) {
        auto t = target.to(at::kFloat);
        loss = at::mse_loss(asTarget(output, target).to(at::kFloat), t, at::Reduction::Sum);
        count = t.numel();
    } else {
        auto logits = output.reshape({-1, output.size(-1)}).to(at::kFloat);
        auto y = target.reshape({-1});
        loss = at::cross_entropy_loss(logits, y, {}, at::Reduction::Sum);
        correct = logits.argmax(-1).eq(y).sum();
        count = y.size(0);
    }
    loss = loss.to(at::kDouble);
    sums.loss = sums.loss.defined() ? sums.loss + loss : loss;
    if (correct.defined()) {
        sums.correct = sums.correct.defined() ? sums.correct + correct : correct;
    }
    sums.count += count;
}

std::string TaskHead::mismatch(const at::Tensor& output, const at::Tensor& target,
                               const data::InputShape& shape) const {
    const std::string out = shapeText(output.sizes());
    const std::string tgt = shapeText(target.sizes());
    const bool int_target = !at::isFloatingType(target.scalar_type());
    if (!at::isFloatingType(output.scalar_type())) {
        return "the model returns " + dtypeName(output.scalar_type()) +
               " values; it must return floating-point logits or values";
    }
    if (output.dim() == 0 || output.size(0) != target.size(0)) {
        return "the model returns " + out + " for a batch of " + std::to_string(target.size(0)) +
               " samples; the first dimension must be the batch";
    }
    switch (task_) {
        case Task::Classification:
            if (!int_target) {
                return "classification needs integer class labels, but the targets are "
                       "floating-point " +
                       tgt + " (set model.task to regression for values)";
            }
            if (output.dim() != 2 || target.dim() != 1) {
                return "classification expects logits [N, C] against labels [N]; the model "
                       "returns " +
                       out + " against labels " + tgt +
                       (output.dim() == 3 && target.dim() == 2
                            ? " (per-position outputs: set model.task to tokens)"
                            : "");
            }
            if (output.size(1) < shape.classes) {
                return "the labels go up to " + std::to_string(shape.classes - 1) +
                       " but the model returns " + std::to_string(output.size(1)) +
                       " logits per sample (" + out + "): a label out of the model's range";
            }
            return {};
        case Task::Tokens:
            if (!int_target) {
                return "token prediction needs integer token targets [N, T], but the targets "
                       "are floating-point " +
                       tgt;
            }
            if (output.dim() != 3 || target.dim() != 2 || output.size(1) != target.size(1)) {
                return "token prediction expects logits [N, T, V] against targets [N, T]; the "
                       "model returns " +
                       out + " against targets " + tgt;
            }
            if (output.size(2) < shape.classes) {
                return "the token ids go up to " + std::to_string(shape.classes - 1) +
                       " but the model returns " + std::to_string(output.size(2)) +
                       " logits per position (" + out + "): a token out of the vocabulary";
            }
            return {};
        case Task::Regression: {
            if (!asTarget(output, target).sizes().equals(target.sizes())) {
                return "regression expects outputs shaped like the targets " + tgt +
                       "; the model returns " + out;
            }
            return {};
        }
        case Task::Auto:
            break;
    }
    return {};
}

}  // namespace ampbench::train
