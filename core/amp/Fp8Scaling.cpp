#include "core/amp/Fp8Scaling.h"

#include <ATen/ATen.h>
#include <torch/version.h>

#include <limits>

namespace ampbench::amp {

at::Tensor scaleFromAmax(const at::Tensor& amax, const at::Tensor& previous, double largest,
                         int margin) {
    const double room = largest / static_cast<double>(int64_t{1} << margin);
    const auto usable = at::logical_and(at::isfinite(amax), amax > 0);
    // Where amax is unusable the division is not used; keep it finite anyway.
    auto fresh = (room / at::where(usable, amax, at::ones_like(amax)))
                     .clamp_max(std::numeric_limits<float>::max());
    return at::where(usable, fresh, previous);
}

Fp8Scaling Fp8Scaling::make(int history, double largest, int margin, c10::Device device) {
    const auto f = at::TensorOptions().dtype(at::kFloat).device(device);
    Fp8Scaling s;
    s.history = at::zeros({history}, f);
    s.scale = at::ones({1}, f);
    s.amax = at::zeros({1}, f);
    s.done = at::zeros({1}, f.dtype(at::kInt));
    s.largest = largest;
    s.margin = margin;
    return s;
}

void Fp8Scaling::push() {
    if (history.numel() > 1) {
        history.narrow(0, 1, history.numel() - 1)
            .copy_(history.narrow(0, 0, history.numel() - 1).clone());
    }
    history.narrow(0, 0, 1).copy_(amax);
    // The largest finite entry: non-finite casts do not set the scale.
    auto finite = at::where(at::isfinite(history), history, at::zeros_like(history));
    scale.copy_(scaleFromAmax(finite.max().reshape({1}), scale, largest, margin));
    amax.zero_();
    primed = true;
}

at::Tensor scaledForCast(const at::Tensor& x, const at::Tensor& scale, double largest) {
    auto y = (x.to(at::kFloat) * scale).clamp(-largest, largest);
    y = at::where(at::isfinite(x), y, at::full_like(y, std::numeric_limits<float>::quiet_NaN()));
#if defined(TORCH_VERSION_MAJOR) && TORCH_VERSION_MAJOR >= 2
    y = y.to(largest == kE4m3Max ? at::kFloat8_e4m3fn : at::kFloat8_e5m2).to(at::kFloat);
#endif
    return y;
}

}  // namespace ampbench::amp
