#include "core/amp/HalfLinear.h"

#include <torch/csrc/autograd/custom_function.h>

#include <atomic>
#include <tuple>

#include "core/autocast/AutocastGuard.h"

#ifdef AMPBENCH_WITH_CUDA
#include <c10/cuda/CUDAStream.h>

#include "core/amp/LayerNormCuda.h"
#endif

namespace ampbench::amp {

namespace {

std::atomic<bool> fused_kernels{true};

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

#ifdef AMPBENCH_WITH_CUDA
cuda::Element halfElement(at::ScalarType type) {
    return type == at::kBFloat16 ? cuda::Element::BFloat16 : cuda::Element::Half;
}
#endif

/// layer_norm(x) over the last dimension, written in `dtype`; saves x (float32) and
/// each row's mean and 1/std, as ATen's LayerNorm does. On CUDA our two kernels; on
/// any other device ATen's LayerNorm and its backward with the same saved tensors.
class LayerNormToHalfFunction : public torch::autograd::Function<LayerNormToHalfFunction> {
  public:
    static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, const at::Tensor& gamma,
                              const at::Tensor& beta, double eps, int64_t dtype) {
        const auto type = static_cast<at::ScalarType>(dtype);
        const auto input = x.contiguous();
        const auto g = gamma.contiguous(), b = beta.contiguous();
        const int64_t cols = input.size(-1), rows = input.numel() / cols;
        at::Tensor y, mean, rstd;
#ifdef AMPBENCH_WITH_CUDA
        if (input.is_cuda()) {
            y = at::empty(input.sizes(), input.options().dtype(type));
            mean = at::empty({rows}, input.options());
            rstd = at::empty({rows}, input.options());
            cuda::layerNormToHalf(input.data_ptr<float>(), rows, cols, g.data_ptr<float>(),
                                  b.data_ptr<float>(), eps, halfElement(type), y.data_ptr(),
                                  mean.data_ptr<float>(), rstd.data_ptr<float>(),
                                  c10::cuda::getCurrentCUDAStream().stream());
        }
#endif
        if (!y.defined()) {
            at::Tensor normed;
            std::tie(normed, mean, rstd) = at::native_layer_norm(input, {cols}, g, b, eps);
            y = normed.to(type);
        }
        ctx->save_for_backward({input, g, b, mean, rstd});
        ctx->saved_data["dtype"] = dtype;
        return y;
    }
    static variable_list backward(AutogradContext* ctx, variable_list grads) {
        const auto saved = ctx->get_saved_variables();
        const at::Tensor &x = saved[0], &gamma = saved[1], &beta = saved[2], &mean = saved[3],
                         &rstd = saved[4];
        const auto type = static_cast<at::ScalarType>(ctx->saved_data["dtype"].toInt());
        const auto dy = grads[0].to(type).contiguous();
        const int64_t cols = x.size(-1), rows = x.numel() / cols;
#ifdef AMPBENCH_WITH_CUDA
        if (x.is_cuda()) {
            auto dx = at::empty_like(x);
            auto partials = at::empty({cuda::layerNormPartialRows(rows), 2, cols}, x.options());
            cuda::layerNormFromHalfBackward(
                dy.data_ptr(), halfElement(type), x.data_ptr<float>(), mean.data_ptr<float>(),
                rstd.data_ptr<float>(), gamma.data_ptr<float>(), rows, cols, dx.data_ptr<float>(),
                partials.data_ptr<float>(), c10::cuda::getCurrentCUDAStream().stream());
            const auto sums = partials.sum(0);
            return {dx, sums[0], sums[1], at::Tensor(), at::Tensor()};
        }
#endif
        (void)rows;
        auto [dx, dgamma, dbeta] = at::native_layer_norm_backward(
            dy.to(at::kFloat), x, {cols}, mean, rstd, gamma, beta, {true, true, true});
        return {dx, dgamma, dbeta, at::Tensor(), at::Tensor()};
    }
};

bool isFloat(const at::Tensor& t, c10::Device device) {
    return t.defined() && t.device() == device && t.scalar_type() == at::kFloat;
}

}  // namespace

bool fusedKernels() {
    return fused_kernels.load();
}

void setFusedKernels(bool on) {
    fused_kernels.store(on);
}

bool layerNormToHalfTakes(const at::Tensor& x, const at::Tensor& gamma, const at::Tensor& beta) {
    if (!x.defined() || x.dim() == 0 || x.numel() == 0) {
        return false;
    }
    const int64_t cols = x.size(-1);
#ifdef AMPBENCH_WITH_CUDA
    if (x.is_cuda() && cols > cuda::kLayerNormMaxCols) {
        return false;
    }
#endif
    return isFloat(x, x.device()) && isFloat(gamma, x.device()) && isFloat(beta, x.device()) &&
           gamma.numel() == cols && beta.numel() == cols;
}

at::Tensor layerNormToHalf(const at::Tensor& x, const at::Tensor& gamma, const at::Tensor& beta,
                           double eps, at::ScalarType dtype) {
    return LayerNormToHalfFunction::apply(x, gamma, beta, eps, static_cast<int64_t>(dtype));
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
    if (fusedKernels() && x.defined() && x.is_cuda() &&
        autocast::AutocastGuard::isEnabled(c10::DeviceType::CUDA) &&
        layerNormToHalfTakes(x, ln_weight, ln_bias)) {
        ++fused_norms_;
        return at::linear(layerNormToHalf(x, ln_weight, ln_bias, eps, dtype_), weight, bias);
    }
#endif
    return LinearHook::layerNormLinear(x, ln_weight, ln_bias, eps, weight, bias);
}

}  // namespace ampbench::amp
