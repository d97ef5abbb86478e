#include "core/models/Checkpoint.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <torch/autograd.h>
#include <torch/csrc/autograd/custom_function.h>
#include <torch/custom_class.h>
#include <atomic>

#include "core/autocast/AutocastGuard.h"

#ifdef AMPBENCH_WITH_CUDA
#include <ATen/cuda/CUDAGeneratorImpl.h>
#include <c10/cuda/CUDAFunctions.h>
#endif

namespace ampbench::models {
namespace {

std::atomic<int64_t> g_recomputations{0};

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

/// The block, kept in the autograd context between forward and backward.
struct BlockHolder : torch::CustomClassHolder {
    explicit BlockHolder(BlockFunction f) : fn(std::move(f)) {}
    BlockFunction fn;
};

/// RNG states to replay the forward's random draws (dropout) in backward.
struct RngState {
    at::Tensor cpu;
    at::Tensor cuda;
    int cuda_device = -1;

    static RngState capture(const at::Tensor& x) {
        RngState s;
        auto cpu_gen = at::detail::getDefaultCPUGenerator();
        {
            std::lock_guard<std::mutex> lock(cpu_gen.mutex());
            s.cpu = cpu_gen.get_state();
        }
#ifdef AMPBENCH_WITH_CUDA
        if (x.is_cuda()) {
            s.cuda_device = x.get_device();
            auto gen = at::cuda::detail::getDefaultCUDAGenerator(s.cuda_device);
            std::lock_guard<std::mutex> lock(gen.mutex());
            s.cuda = gen.get_state();
        }
#else
        (void)x;
#endif
        return s;
    }

    void restore() const {
        auto cpu_gen = at::detail::getDefaultCPUGenerator();
        {
            std::lock_guard<std::mutex> lock(cpu_gen.mutex());
            cpu_gen.set_state(cpu);
        }
#ifdef AMPBENCH_WITH_CUDA
        if (cuda.defined()) {
            auto gen = at::cuda::detail::getDefaultCUDAGenerator(cuda_device);
            std::lock_guard<std::mutex> lock(gen.mutex());
            gen.set_state(cuda);
        }
#endif
    }
};

class CheckpointFunction : public torch::autograd::Function<CheckpointFunction> {
  public:
    // `anchor` requires grad so that backward runs even when `x` does not (the
    // first block's input): otherwise the block's parameters would get no gradient.
    static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, const at::Tensor& anchor,
                              c10::intrusive_ptr<BlockHolder> block) {
        (void)anchor;
        const auto device = x.device().type();
        const bool enabled = autocast::AutocastGuard::isEnabled(device);
        const auto dtype = autocast::AutocastGuard::dtype(device);
        ctx->saved_data["block"] = c10::IValue::make_capsule(block);
        ctx->saved_data["autocast"] = enabled;
        ctx->saved_data["dtype"] = static_cast<int64_t>(dtype);
        ctx->saved_data["x_requires_grad"] = x.requires_grad();
        auto rng = RngState::capture(x);
        ctx->saved_data["rng_cpu"] = rng.cpu;
        ctx->saved_data["rng_cuda"] = rng.cuda.defined() ? rng.cuda : at::Tensor();
        ctx->saved_data["rng_cuda_device"] = static_cast<int64_t>(rng.cuda_device);
        ctx->save_for_backward({x});
        // No-grad pass inside autocast: cache off (LibTorch 1.13 loses grad_fn otherwise).
        autocast::AutocastGuard same(device, enabled ? dtype : at::kBFloat16, enabled,
                                     /*cache=*/false);
        torch::NoGradGuard no_grad;
        return block->fn(x);
    }

    static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
        auto saved = ctx->get_saved_variables();
        auto x = saved[0].detach();
        x.requires_grad_(ctx->saved_data["x_requires_grad"].toBool());
        auto block =
            c10::static_intrusive_pointer_cast<BlockHolder>(ctx->saved_data["block"].toCapsule());
        const bool enabled = ctx->saved_data["autocast"].toBool();
        const auto dtype = static_cast<at::ScalarType>(ctx->saved_data["dtype"].toInt());
        RngState rng;
        rng.cpu = ctx->saved_data["rng_cpu"].toTensor();
        auto cuda_state = ctx->saved_data["rng_cuda"];
        if (cuda_state.isTensor() && cuda_state.toTensor().defined()) {
            rng.cuda = cuda_state.toTensor();
        }
        rng.cuda_device = static_cast<int>(ctx->saved_data["rng_cuda_device"].toInt());
        // Replay the forward's random draws, then put the generators back.
        auto now = RngState::capture(x);
        rng.restore();
        at::Tensor y;
        {
            torch::AutoGradMode grad(true);
            autocast::AutocastGuard same(x.device().type(), enabled ? dtype : at::kBFloat16,
                                         enabled,
                                         /*cache=*/false);
            y = block->fn(x);
        }
        now.restore();
        g_recomputations.fetch_add(1, std::memory_order_relaxed);
        torch::autograd::backward({y}, {grad_outputs[0]});
        at::Tensor dx = x.requires_grad() ? x.grad() : at::Tensor();
        return {dx, at::Tensor(), at::Tensor()};
    }
};

}  // namespace

int64_t checkpointRecomputations() {
    return g_recomputations.load(std::memory_order_relaxed);
}

at::Tensor checkpoint(const BlockFunction& block, const at::Tensor& x) {
    if (!at::GradMode::is_enabled()) {
        return block(x);
    }
    static thread_local at::Tensor anchor;
    if (!anchor.defined() || anchor.device() != x.device()) {
        anchor = at::zeros({}, x.options().dtype(at::kFloat)).requires_grad_();
    }
    return CheckpointFunction::apply(x, anchor, c10::make_intrusive<BlockHolder>(block));
}

}  // namespace ampbench::models
