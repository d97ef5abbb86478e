#include "core/amp/HalfLinear.h"

#include <atomic>

#include "core/amp/AutocastGuard.h"

#ifdef AMPBENCH_WITH_CUDA
#include <c10/cuda/CUDAStream.h>
#include <torch/csrc/autograd/custom_function.h>

#include "core/amp/LayerNormCuda.h"
#endif

namespace ampbench::amp {

namespace {

std::atomic<bool> fused_kernels{true};

#ifdef AMPBENCH_WITH_CUDA
using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

cuda::Element halfElement(at::ScalarType type) {
    return type == at::kBFloat16 ? cuda::Element::BFloat16 : cuda::Element::Half;
}

/// layer_norm(x) over the last dimension, written in `dtype`; saves x (float32) and
/// each row's mean and 1/std, as ATen's LayerNorm does.
class LayerNormToHalfFunction : public torch::autograd::Function<LayerNormToHalfFunction> {
  public:
    static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, const at::Tensor& gamma,
                              const at::Tensor& beta, double eps, int64_t dtype) {
        const auto type = static_cast<at::ScalarType>(dtype);
        const auto input = x.contiguous();
        const auto g = gamma.contiguous(), b = beta.contiguous();
        const int64_t cols = input.size(-1), rows = input.numel() / cols;
        auto y = at::empty(input.sizes(), input.options().dtype(type));
        auto mean = at::empty({rows}, input.options()), rstd = at::empty({rows}, input.options());
        cuda::layerNormToHalf(input.data_ptr<float>(), rows, cols, g.data_ptr<float>(),
                              b.data_ptr<float>(), eps, halfElement(type), y.data_ptr(),
                              mean.data_ptr<float>(), rstd.data_ptr<float>(),
                              c10::cuda::getCurrentCUDAStream().stream());
        ctx->save_for_backward({input, g, mean, rstd});
        ctx->saved_data["dtype"] = dtype;
        return y;
    }
    static variable_list backward(AutogradContext* ctx, variable_list grads) {
        const auto saved = ctx->get_saved_variables();
        const at::Tensor &x = saved[0], &gamma = saved[1], &mean = saved[2], &rstd = saved[3];
        const auto type = static_cast<at::ScalarType>(ctx->saved_data["dtype"].toInt());
        const auto dy = grads[0].to(type).contiguous();
        const int64_t cols = x.size(-1), rows = x.numel() / cols;
        auto dx = at::empty_like(x);
        auto partials = at::empty({cuda::layerNormPartialRows(rows), 2, cols}, x.options());
        cuda::layerNormFromHalfBackward(
            dy.data_ptr(), halfElement(type), x.data_ptr<float>(), mean.data_ptr<float>(),
            rstd.data_ptr<float>(), gamma.data_ptr<float>(), rows, cols, dx.data_ptr<float>(),
            partials.data_ptr<float>(), c10::cuda::getCurrentCUDAStream().stream());
        const auto sums = partials.sum(0);
        return {dx, sums[0], sums[1], at::Tensor(), at::Tensor()};
    }
};

bool isCudaFloat(const at::Tensor& t) {
    return t.defined() && t.is_cuda() && t.scalar_type() == at::kFloat;
}
#endif

}  // namespace

bool fusedKernels() {
    return fused_kernels.load();
}

void setFusedKernels(bool on) {
    fused_kernels.store(on);
}

at::Tensor HalfLinears::linear(const at::Tensor& x, const at::Tensor& weight,
                               const at::Tensor& bias) {
    return at::linear(x, weight, bias);
}

at::Tensor HalfLinears::layerNormLinear(const at::Tensor& x, const at::Tensor& ln_weight,
                                        const at::Tensor& ln_bias, double eps,
                                        const at::Tensor& weight, const at::Tensor& bias) {
#ifdef AMPBENCH_WITH_CUDA
    // Autocast's LayerNorm takes a float32 input and computes in float32; the fused one
    // does the same and writes what the Linear's cast would have made of its output.
    const int64_t cols = x.dim() > 0 ? x.size(-1) : 0;
    if (fusedKernels() && AutocastGuard::isEnabled(c10::DeviceType::CUDA) && isCudaFloat(x) &&
        x.numel() > 0 && cols <= cuda::kLayerNormMaxCols && isCudaFloat(ln_weight) &&
        isCudaFloat(ln_bias) && ln_weight.numel() == cols && ln_bias.numel() == cols) {
        ++fused_norms_;
        const auto y = LayerNormToHalfFunction::apply(x, ln_weight, ln_bias, eps,
                                                      static_cast<int64_t>(dtype_));
        return at::linear(y, weight, bias);
    }
#endif
    return LinearHook::layerNormLinear(x, ln_weight, ln_bias, eps, weight, bias);
}

}  // namespace ampbench::amp
