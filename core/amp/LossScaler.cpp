#include "core/amp/LossScaler.h"

#include <ATen/ATen.h>
#include <torch/version.h>

#include <cmath>

namespace ampbench::amp {

bool fusedScalerKernels(c10::Device device) {
    if (device.is_cuda()) {
        return true;
    }
#if TORCH_VERSION_MAJOR >= 2
    return device.is_cpu();
#else
    return false;
#endif
}

LossScaler::LossScaler(const config::ScalerSpec& options, c10::Device device, bool force_portable)
    : options_(options), fused_(!force_portable && fusedScalerKernels(device)) {
    auto f32 = at::TensorOptions().dtype(at::kFloat).device(device);
    scale_ = at::full({1}, options.init_scale, f32);
    tracker_ = at::zeros({1}, f32.dtype(at::kInt));
    found_inf_ = at::zeros({1}, f32);
}

at::Tensor LossScaler::scale(const at::Tensor& loss) const {
    return loss * scale_.to(loss.scalar_type());
}

void LossScaler::unscale(const std::vector<at::Tensor>& grads) {
    found_inf_.zero_();
    // PyTorch computes the reciprocal in double and stores it as float32.
    auto inv_scale = scale_.to(at::kDouble).reciprocal().to(at::kFloat);
    if (grads.empty()) {
        return;
    }
    if (fused_) {
        at::_amp_foreach_non_finite_check_and_unscale_(grads, found_inf_, inv_scale);
        return;
    }
    // Portable path: same result as the fused kernel (multiply, then test finiteness).
    for (const auto& g : grads) {
        auto gg = g;
        gg.mul_(inv_scale.to(g.scalar_type()));
        found_inf_.masked_fill_(gg.isfinite().all().logical_not(), 1.0);
    }
}

bool LossScaler::foundInf() const {
    return found_inf_.item<float>() != 0.0f;
}

void LossScaler::update() {
    if (fused_) {
        at::_amp_update_scale_(scale_, tracker_, found_inf_, options_.growth_factor,
                               options_.backoff_factor, options_.growth_interval);
    } else {
        if (found_inf_.item<float>() != 0.0f) {
            scale_.mul_(options_.backoff_factor);
            tracker_.zero_();
        } else {
            int successful = tracker_.item<int>() + 1;
            if (successful == options_.growth_interval) {
                auto grown = scale_ * options_.growth_factor;
                if (std::isfinite(grown.item<float>())) {
                    scale_.copy_(grown);
                }
                tracker_.zero_();
            } else {
                tracker_.fill_(successful);
            }
        }
    }
    found_inf_.zero_();
}

double LossScaler::scaleValue() const {
    return scale_.item<float>();
}

int LossScaler::growthTracker() const {
    return tracker_.item<int>();
}

}  // namespace ampbench::amp
