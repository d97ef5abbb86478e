#include "core/amp/PrecisionPolicy.h"

namespace ampbench::amp {

PrecisionPolicy::PrecisionPolicy(config::Precision precision, const config::ScalerSpec& scaler,
                                 c10::Device device)
    : precision_(precision),
      autocast_(precision != config::Precision::Fp32),
      dtype_(precision == config::Precision::AmpFp16 ? at::kHalf : at::kBFloat16),
      device_type_(device.type()) {
    if (precision == config::Precision::AmpFp16) {
        LossScalerOptions options{scaler.init_scale, scaler.growth_factor, scaler.backoff_factor,
                                  scaler.growth_interval};
        scaler_ = std::make_unique<LossScaler>(options, device);
    }
}

std::string PrecisionPolicy::unsupported() const {
    if (!autocast_ || autocastSupported(device_type_, dtype_)) {
        return {};
    }
    return config::toString(precision_) + " autocast is not supported on " +
           c10::DeviceTypeName(device_type_, /*lower_case=*/true) +
           " by this LibTorch (1.13 CPU autocast takes bf16 only): use amp-bf16 or run on CUDA";
}

void PrecisionPolicy::backward(const at::Tensor& loss, int accumulation) const {
    auto scaled = accumulation > 1 ? loss / static_cast<double>(accumulation) : loss;
    if (scaler_) {
        scaled = scaler_->scale(scaled);
    }
    scaled.backward();
}

at::Tensor PrecisionPolicy::scaleInUse() const {
    return scaler_ ? scaler_->scaleTensor().clone() : at::Tensor();
}

std::string PrecisionPolicy::scalerKind() const {
    if (!scaler_) {
        return {};
    }
    return scaler_->fused() ? "ATen's fused kernels" : "portable tensor ops";
}

}  // namespace ampbench::amp
