#include "core/amp/PrecisionPolicy.h"

#include "core/amp/Fp8Linear.h"

namespace ampbench::amp {

PrecisionPolicy::PrecisionPolicy(config::Precision precision, const config::ScalerSpec& scaler,
                                 c10::Device device, bool loss_scaling)
    : precision_(precision),
      // fp8: everything but the FP8 Linear layers runs under bf16 autocast.
      autocast_(precision == config::Precision::AmpFp16 ||
                precision == config::Precision::AmpBf16 || precision == config::Precision::Fp8),
      // fp32 keeps bf16 as the (unused) autocast dtype: LibTorch 1.13's CPU autocast
      // refuses any other, even when autocast is off.
      dtype_(precision == config::Precision::AmpFp16 || precision == config::Precision::PureFp16
                 ? at::kHalf
                 : at::kBFloat16),
      device_type_(device.type()),
      device_(device) {
    if (precision == config::Precision::AmpFp16 && loss_scaling) {
        scaler_ = std::make_unique<LossScaler>(scaler, device);
    }
}

std::string PrecisionPolicy::unsupported() const {
    if (precision_ == config::Precision::Fp8) {
        return fp8Unavailable(device_);
    }
    if (halfModel()) {
        return device_type_ == c10::DeviceType::CUDA
                   ? std::string()
                   : "pure-fp16 runs on CUDA only (half-precision kernels on the CPU are "
                     "missing in LibTorch)";
    }
    if (!autocast_ || autocastSupported(device_type_, dtype_)) {
        return {};
    }
    return config::toString(precision_) + " autocast is not supported on " +
           c10::DeviceTypeName(device_type_, /*lower_case=*/true) +
           " by this LibTorch (1.13 CPU autocast takes bf16 only): use amp-bf16 or run on CUDA";
}

void PrecisionPolicy::prepareModel(const std::vector<at::Tensor>& parameters,
                                   const std::vector<at::Tensor>& buffers) const {
    if (!halfModel()) {
        return;
    }
    at::NoGradGuard no_grad;
    for (const auto* list : {&parameters, &buffers}) {
        for (auto t : *list) {
            if (at::isFloatingType(t.scalar_type())) {
                t.set_data(t.to(at::kHalf));
            }
        }
    }
}

at::Tensor PrecisionPolicy::input(const at::Tensor& x) const {
    return halfModel() && at::isFloatingType(x.scalar_type()) ? x.to(at::kHalf) : x;
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
