#include "core/amp/Fp8Linear.h"

#include <ATen/ATen.h>
#include <torch/nn/modules/linear.h>
#include <torch/version.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>

#if defined(AMPBENCH_WITH_CUDA) && \
    (TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4))
#define AMPBENCH_FP8 1
#include <ATen/autocast_mode.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/csrc/autograd/custom_function.h>

#include "core/amp/Fp8Cuda.h"
#endif

namespace ampbench::amp {

std::string fp8Unavailable(c10::Device device) {
#ifndef AMPBENCH_FP8
    (void)device;
    return std::string("fp8 needs LibTorch 2.4 or later built with CUDA (this build: LibTorch ") +
           TORCH_VERSION +
#ifdef AMPBENCH_WITH_CUDA
           " with CUDA)";
#else
           ", CPU only)";
#endif
#else
    if (!device.is_cuda()) {
        return "fp8 runs on CUDA only (this run: " + device.str() + ")";
    }
    const cudaDeviceProp* p =
        at::cuda::getDeviceProperties(device.index() < 0 ? 0 : device.index());
    if (p->major * 10 + p->minor < 89) {
        return "fp8 needs a GPU of compute capability 8.9 or later (Ada, Hopper, Blackwell); " +
               std::string(p->name) + " has " + std::to_string(p->major) + "." +
               std::to_string(p->minor);
    }
    return {};
#endif
}

namespace {
enum Role { kInput, kWeight, kGradOutput, kRoles };
const char* const kRoleNames[kRoles] = {"input", "weight", "grad_output"};
}  // namespace

struct Fp8Linears::Layer {
    const Fp8LayerPlan* plan = nullptr;
    Fp8Scaling scaling[kRoles];
    config::Fp8Recipe recipe = config::Fp8Recipe::Delayed;
    const bool* counting = nullptr;  // the owner's flag
    at::Tensor counts;               // [roles, 4] int64 while counting
    int64_t numel[kRoles] = {0, 0, 0};
    at::Tensor inv_used[kRoles];  // the last cast's 1 / scale, while counting
};

#ifdef AMPBENCH_FP8
namespace {

cuda::Element elementOf(const at::Tensor& t) {
    switch (t.scalar_type()) {
        case at::kFloat:
            return cuda::Element::Float;
        case at::kHalf:
            return cuda::Element::Half;
        case at::kBFloat16:
            return cuda::Element::BFloat16;
        default:
            throw std::runtime_error(std::string("fp8: cannot cast a ") +
                                     c10::toString(t.scalar_type()) + " tensor");
    }
}

struct Cast {
    at::Tensor q;            // the FP8 values, row-major as given
    at::Tensor qt;           // their transpose, row-major
    at::Tensor inv;          // [1] float32: 1 / scale, what the matmul decodes with
    at::Tensor column_sums;  // [cols] float32, where asked: a bias gradient
};

/// The fused cast of the matrix `x` (dense, rows × cols), through `activation`, and
/// its transpose with `layer`'s state for `role`, which the cast's last block
/// updates; with `column_sums`, also the sums of x's columns in float32, in the same
/// pass (the bias gradient, without a second read of the output gradient).
Cast castFp8(const at::Tensor& x, Fp8Linears::Layer& layer, Role role,
             cuda::Activation activation = cuda::Activation::None, bool column_sums = false,
             const cuda::RowNorm& norm = {}) {
    Fp8Scaling& s = layer.scaling[role];
    const bool e4m3 = role != kGradOutput;
    const auto dtype = e4m3 ? at::kFloat8_e4m3fn : at::kFloat8_e5m2;
    const int64_t rows = x.size(0), cols = x.size(1);
    const auto f32 = x.options().dtype(at::kFloat);
    Cast c;
    c.q = at::empty({rows, cols}, x.options().dtype(dtype));
    c.qt = at::empty({cols, rows}, x.options().dtype(dtype));
    c.inv = at::empty({1}, f32);
    at::Tensor partials;
    if (column_sums) {
        partials = at::empty({cuda::castPartialRows(rows), cols}, f32);
    }
    void* stream = c10::cuda::getCurrentCUDAStream().stream();
    float* amax = s.amax.data_ptr<float>();
    const bool from_amax = layer.recipe == config::Fp8Recipe::Current || !s.primed;
    if (from_amax) {
        cuda::amaxOf(x.data_ptr(), elementOf(x), x.numel(), activation, amax, stream);
    }
    cuda::CastJob job;
    job.in = x.data_ptr();
    job.element = elementOf(x);
    job.rows = rows;
    job.cols = cols;
    job.activation = activation;
    job.out = c.q.data_ptr();
    job.out_t = c.qt.data_ptr();
    job.format = e4m3 ? cuda::Fp8Format::E4m3 : cuda::Fp8Format::E5m2;
    job.scale = from_amax ? nullptr : s.scale.data_ptr<float>();
    job.amax_in = from_amax ? amax : nullptr;
    job.margin_factor = std::ldexp(1.0f, s.margin);
    job.inv_scale = c.inv.data_ptr<float>();
    job.amax_out = from_amax ? nullptr : amax;
    job.counts = *layer.counting
                     ? reinterpret_cast<unsigned long long*>(layer.counts[role].data_ptr<int64_t>())
                     : nullptr;
    job.column_partials = column_sums ? partials.data_ptr<float>() : nullptr;
    // The history and the next scale (for a current tensor only the record of its amax).
    job.state.history = s.history.data_ptr<float>();
    job.state.length = static_cast<int>(s.history.numel());
    job.state.amax = amax;
    job.state.scale = s.scale.data_ptr<float>();
    job.state.done = reinterpret_cast<unsigned int*>(s.done.data_ptr<int32_t>());
    job.norm = norm;
    const int64_t partial_rows = cuda::castTransposeToFp8(job, stream);
    if (column_sums) {
        c.column_sums = at::empty({cols}, f32);
        cuda::sumColumnPartials(partials.data_ptr<float>(), partial_rows, cols,
                                c.column_sums.data_ptr<float>(), stream);
    }
    s.primed = true;
    if (*layer.counting) {
        layer.numel[role] += x.numel();
        layer.inv_used[role] = c.inv;
    }
    return c;
}

/// What stands for a layer without bias (an input of no elements, no gradient).
const at::Tensor& kNoBias() {
    static const at::Tensor none = at::empty({0});
    return none;
}

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

/// y = act(x) Wᵀ + b with act(x) and W in e4m3 (act applied inside the cast, with
/// `norm` for a LayerNorm). The scaled matmul takes its first operand row-major, its
/// second column-major (a transposed row-major tensor). Saves what fp8Backward needs,
/// then `also` (what act's backward needs).
at::Tensor fp8Forward(AutogradContext* ctx, const at::Tensor& x, const at::Tensor& weight,
                      const at::Tensor& bias, int64_t layer_id, cuda::Activation act,
                      const std::vector<at::Tensor>& also = {}, const cuda::RowNorm& norm = {}) {
    auto* layer = reinterpret_cast<Fp8Linears::Layer*>(layer_id);
    const int64_t in = weight.size(1), out = weight.size(0);
    const auto x2 = x.reshape({-1, in}).contiguous();
    const Cast xq = castFp8(x2, *layer, kInput, act, false, norm);
    const Cast wq = castFp8(weight.contiguous(), *layer, kWeight);
    const bool has_bias = bias.numel() > 0;
    std::optional<at::Tensor> b;
    if (has_bias) {
        b = bias.to(at::kBFloat16);
    }
    // W [out, in] row-major is Wᵀ column-major: the matmul's second operand.
    auto y = at::_scaled_mm(xq.q, wq.q.t(), xq.inv, wq.inv, b, std::nullopt, at::kBFloat16,
                            /*use_fast_accum=*/true);
    // The backward needs the transposes only (xᵀ, Wᵀ, row-major), and what act' needs.
    std::vector<at::Tensor> saved = {xq.qt, wq.qt, xq.inv, wq.inv};
    saved.insert(saved.end(), also.begin(), also.end());
    ctx->save_for_backward(saved);
    ctx->saved_data["layer"] = layer_id;
    ctx->saved_data["x_dtype"] = static_cast<int64_t>(x.scalar_type());
    ctx->saved_data["bias"] = has_bias;
    ctx->saved_data["bias_dtype"] = static_cast<int64_t>(bias.scalar_type());
    auto shape = x.sizes().vec();
    shape.back() = out;
    return y.view(shape);
}

/// The gradients of y = a Wᵀ + b with respect to a (the cast's input after act), W
/// and b: dy in e5m2 with the bias gradient taken in its cast.
variable_list fp8Backward(AutogradContext* ctx, const variable_list& grads) {
    auto* layer = reinterpret_cast<Fp8Linears::Layer*>(ctx->saved_data["layer"].toInt());
    const auto saved = ctx->get_saved_variables();
    const at::Tensor& xt = saved[0];  // xᵀ [in, M]
    const at::Tensor& wt = saved[1];  // Wᵀ [in, out]
    const int64_t in = wt.size(0), out = wt.size(1);
    const auto x_dtype = static_cast<at::ScalarType>(ctx->saved_data["x_dtype"].toInt());
    const bool has_bias = ctx->saved_data["bias"].toBool();
    const auto dy = grads[0].reshape({-1, out}).contiguous();
    const Cast g = castFp8(dy, *layer, kGradOutput, cuda::Activation::None, has_bias);
    // dx [M, in] = dy [M, out] · W [out, in]; W column-major is Wᵀ row-major.
    auto dx = at::_scaled_mm(g.q, wt.t(), g.inv, saved[3], std::nullopt, std::nullopt, x_dtype,
                             /*use_fast_accum=*/false);
    // dW [out, in] = dyᵀ [out, M] · x [M, in]; x column-major is xᵀ row-major.
    auto dw = at::_scaled_mm(g.qt, xt.t(), g.inv, saved[2], std::nullopt, std::nullopt, at::kFloat,
                             /*use_fast_accum=*/false);
    at::Tensor db;
    if (has_bias) {
        db = g.column_sums.to(static_cast<at::ScalarType>(ctx->saved_data["bias_dtype"].toInt()));
    }
    auto shape = grads[0].sizes().vec();
    shape.back() = in;
    return {dx.view(shape), dw, db, at::Tensor()};
}

/// A Linear layer in FP8: y = x Wᵀ + b; backward dx = dy W and dW = dyᵀ x.
class Fp8LinearFunction : public torch::autograd::Function<Fp8LinearFunction> {
  public:
    static at::Tensor forward(AutogradContext* ctx, at::Tensor x, at::Tensor weight,
                              at::Tensor bias, int64_t layer_id) {
        return fp8Forward(ctx, x, weight, bias, layer_id, cuda::Activation::None);
    }
    static variable_list backward(AutogradContext* ctx, variable_list grads) {
        return fp8Backward(ctx, grads);
    }
};

/// GELU and the Linear layer after it in FP8: y = gelu(h) Wᵀ + b, the GELU computed
/// in the input's cast, so gelu(h) is never written in bf16 and read back. Backward:
/// the Linear's gradients, then dh = gelu'(h) · d(gelu(h)) as at::gelu's backward.
class Fp8GeluLinearFunction : public torch::autograd::Function<Fp8GeluLinearFunction> {
  public:
    static at::Tensor forward(AutogradContext* ctx, at::Tensor h, at::Tensor weight,
                              at::Tensor bias, int64_t layer_id) {
        return fp8Forward(ctx, h, weight, bias, layer_id, cuda::Activation::Gelu, {h});
    }
    static variable_list backward(AutogradContext* ctx, variable_list grads) {
        auto out = fp8Backward(ctx, grads);
        const at::Tensor h = ctx->get_saved_variables()[4];
        out[0] = at::gelu_backward(out[0], h);
        return out;
    }
};

/// A LayerNorm and the Linear layer after it in FP8: y = LN(x) Wᵀ + b, the LayerNorm
/// applied in the input's cast from its rows' statistics (one read of x for them, one
/// for the cast), so LN(x) is never written in float32 and read back. Backward: the
/// Linear's gradients, then at::native_layer_norm_backward with those statistics.
class Fp8LayerNormLinearFunction : public torch::autograd::Function<Fp8LayerNormLinearFunction> {
  public:
    static at::Tensor forward(AutogradContext* ctx, at::Tensor x, at::Tensor ln_weight,
                              at::Tensor ln_bias, at::Tensor weight, at::Tensor bias,
                              int64_t layer_id, double eps) {
        const auto xc = x.contiguous();
        const int64_t cols = xc.size(-1), rows = xc.numel() / cols;
        auto stat_shape = xc.sizes().vec();
        stat_shape.back() = 1;  // as at::native_layer_norm gives them
        const auto mean = at::empty(stat_shape, xc.options());
        const auto rstd = at::empty(stat_shape, xc.options());
        cuda::rowStatistics(xc.data_ptr<float>(), rows, cols, eps, mean.data_ptr<float>(),
                            rstd.data_ptr<float>(), c10::cuda::getCurrentCUDAStream().stream());
        const auto gamma = ln_weight.contiguous(), beta = ln_bias.contiguous();
        cuda::RowNorm norm;
        norm.mean = mean.data_ptr<float>();
        norm.rstd = rstd.data_ptr<float>();
        norm.gamma = gamma.data_ptr<float>();
        norm.beta = beta.data_ptr<float>();
        return fp8Forward(ctx, xc, weight, bias, layer_id, cuda::Activation::LayerNorm,
                          {xc, mean, rstd, gamma, beta}, norm);
    }
    static variable_list backward(AutogradContext* ctx, variable_list grads) {
        auto linear = fp8Backward(ctx, grads);  // the gradient of LN(x) in x's dtype first
        const auto saved = ctx->get_saved_variables();
        const at::Tensor& x = saved[4];
        auto [dx, dgamma, dbeta] = at::native_layer_norm_backward(
            linear[0], x, {x.size(-1)}, saved[5], saved[6], saved[7], saved[8], {true, true, true});
        return {dx, dgamma, dbeta, linear[1], linear[2], at::Tensor(), at::Tensor()};
    }
};

}  // namespace
#endif

Fp8Linears::Fp8Linears(models::Network& model, const config::ArmSpec& arm, c10::Device device,
                       int64_t rows)
    : plan_(planFp8Layers(model, arm.fp8_modules, rows)) {
    if (const std::string why = fp8Unavailable(device); !why.empty()) {
        throw std::runtime_error(why);
    }
    const auto named = model.named_modules("", /*include_self=*/false);
    for (const auto& p : plan_) {
        if (!p.fp8) {
            continue;
        }
        const auto lin = std::dynamic_pointer_cast<torch::nn::LinearImpl>(named[p.path]);
        auto layer = std::make_unique<Layer>();
        layer->plan = &p;
        layer->recipe = arm.fp8_recipe;
        layer->counting = &counting_;
        for (int r = 0; r < kRoles; ++r) {
            layer->scaling[r] = Fp8Scaling::make(
                arm.fp8_history, r == kGradOutput ? kE5m2Max : kE4m3Max, arm.fp8_margin, device);
        }
        by_weight_[lin->weight.unsafeGetTensorImpl()] = layer.get();
        layers_.push_back(std::move(layer));
    }
}

Fp8Linears::~Fp8Linears() = default;

Fp8Linears::Layer* Fp8Linears::fp8Layer(const at::Tensor& x, const at::Tensor& weight) const {
#ifdef AMPBENCH_FP8
    const auto it = by_weight_.find(weight.unsafeGetTensorImpl());
    // Inside an FP32 island autocast is off: the layer stays fp32 as the island asks.
    const bool island = !at::autocast::is_autocast_enabled(at::kCUDA);
    const int64_t rows = x.dim() > 0 && x.size(-1) > 0 ? x.numel() / x.size(-1) : 0;
    if (it != by_weight_.end() && !island && rows > 0 && rows % 16 == 0 && x.is_cuda()) {
        return it->second;
    }
#else
    (void)x;
    (void)weight;
#endif
    return nullptr;
}

at::Tensor Fp8Linears::linear(const at::Tensor& x, const at::Tensor& weight,
                              const at::Tensor& bias) {
#ifdef AMPBENCH_FP8
    if (Layer* layer = fp8Layer(x, weight)) {
        // A custom function's inputs must be defined tensors: no bias is an empty one.
        return Fp8LinearFunction::apply(x, weight, bias.defined() ? bias : kNoBias(),
                                        reinterpret_cast<int64_t>(layer));
    }
#endif
    return at::linear(x, weight, bias);
}

at::Tensor Fp8Linears::geluLinear(const at::Tensor& x, const at::Tensor& weight,
                                  const at::Tensor& bias) {
#ifdef AMPBENCH_FP8
    if (Layer* layer = fp8Layer(x, weight)) {
        return Fp8GeluLinearFunction::apply(x, weight, bias.defined() ? bias : kNoBias(),
                                            reinterpret_cast<int64_t>(layer));
    }
#endif
    return LinearHook::geluLinear(x, weight, bias);
}

at::Tensor Fp8Linears::layerNormLinear(const at::Tensor& x, const at::Tensor& ln_weight,
                                       const at::Tensor& ln_bias, double eps,
                                       const at::Tensor& weight, const at::Tensor& bias) {
#ifdef AMPBENCH_FP8
    // Fused where the input's scale comes from its history (delayed scaling, after the
    // first cast): the normalised values are never written, so no pass can take their
    // amax before the cast. A float32 input (autocast's LayerNorm computes in float32)
    // with whole 8-value chunks, as the wide cast takes them.
    Layer* layer = fp8Layer(x, weight);
    const auto is_float = [](const at::Tensor& t) {
        return t.defined() && t.scalar_type() == at::kFloat;
    };
    if (layer && layer->recipe == config::Fp8Recipe::Delayed && layer->scaling[kInput].primed &&
        is_float(x) && is_float(ln_weight) && is_float(ln_bias) && x.size(-1) % 8 == 0 &&
        ln_weight.numel() == x.size(-1) && ln_bias.numel() == x.size(-1) &&
        (!x.is_contiguous() || reinterpret_cast<uintptr_t>(x.data_ptr()) % 16 == 0)) {
        ++norms_fused_;
        return Fp8LayerNormLinearFunction::apply(x, ln_weight, ln_bias, weight,
                                                 bias.defined() ? bias : kNoBias(),
                                                 reinterpret_cast<int64_t>(layer), eps);
    }
#endif
    return LinearHook::layerNormLinear(x, ln_weight, ln_bias, eps, weight, bias);
}

void Fp8Linears::countNextStep() {
    counting_ = true;
    for (auto& l : layers_) {
        l->counts = at::zeros({kRoles, 4},  // cuda::kCastCounts
                              l->scaling[0].amax.options().dtype(at::kLong));
        for (int r = 0; r < kRoles; ++r) {
            l->numel[r] = 0;
            l->inv_used[r] = at::Tensor();
        }
    }
}

std::vector<run::NumericsRecord> Fp8Linears::takeCastRecords(int64_t step) {
    std::vector<run::NumericsRecord> out;
    if (!counting_) {
        return out;
    }
    counting_ = false;
    // One gather for every layer: per role the counts, the amax the cast pushed and
    // the decode scale it used.
    std::vector<at::Tensor> parts;
    std::vector<std::pair<Layer*, int>> which;
    for (auto& l : layers_) {
        for (int r = 0; r < kRoles; ++r) {
            if (l->numel[r] == 0 || !l->inv_used[r].defined()) {
                continue;
            }
            parts.push_back(at::cat({l->counts[r].to(at::kDouble),
                                     l->scaling[r].history.narrow(0, 0, 1).to(at::kDouble),
                                     l->inv_used[r].to(at::kDouble)}));
            which.emplace_back(l.get(), r);
        }
    }
    if (parts.empty()) {
        return out;
    }
    const auto host = at::stack(parts).cpu();
    const auto a = host.accessor<double, 2>();
    for (size_t i = 0; i < which.size(); ++i) {
        const auto [layer, r] = which[i];
        const double n = static_cast<double>(layer->numel[r]);
        const double scale = 1.0 / a[i][5];
        run::NumericsRecord rec;
        rec.step = step;
        rec.kind = run::NumericsKind::Cast;
        rec.name = layer->plan->path + ":" + kRoleNames[r];
        rec.format = r == kGradOutput ? "e5m2" : "e4m3";
        rec.dtype = rec.format == "e5m2" ? "float8_e5m2" : "float8_e4m3fn";
        rec.saturated = a[i][0] / n;
        rec.underflow_subnormal = a[i][1] / n;
        rec.underflow_normal = a[i][2] / n;
        rec.nonfinite = static_cast<int64_t>(a[i][3]);
        rec.numel = layer->numel[r];
        rec.scale = scale;
        const double amax = a[i][4];
        rec.absmax = std::isfinite(amax) ? amax * scale : std::numeric_limits<double>::infinity();
        const double largest = layer->scaling[r].largest;
        rec.headroom_log2 = rec.nonfinite > 0 || !std::isfinite(rec.absmax)
                                ? -std::numeric_limits<double>::infinity()
                            : rec.absmax > 0 ? std::log2(largest / rec.absmax)
                                             : std::numeric_limits<double>::infinity();
        out.push_back(std::move(rec));
    }
    return out;
}

}  // namespace ampbench::amp
