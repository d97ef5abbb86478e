#include "core/amp/Precision.h"

#include <stdexcept>

#include "core/amp/Fp8Linear.h"
#include "core/amp/HalfLinear.h"
#include "core/config/PlannedArm.h"

namespace ampbench::amp {

namespace {

/// fp32: no autocast, no scaler; the baseline.
class Fp32Format : public amp::Precision {
  public:
    explicit Fp32Format(c10::Device device)
        : amp::Precision(config::Precision::Fp32, false, at::kBFloat16, device) {}
};

/// Autocast to fp16 (with the dynamic loss scaler unless it is switched off, the
/// noscale control) or bf16; fp32 master weights.
class AutocastFormat : public amp::Precision {
  public:
    AutocastFormat(config::Precision kind, const config::ArmSpec& arm, c10::Device device)
        : amp::Precision(kind, true, kind == config::Precision::AmpFp16 ? at::kHalf : at::kBFloat16,
                         device) {
        if (kind == config::Precision::AmpFp16 && arm.loss_scaling) {
            scaler_ = std::make_unique<LossScaler>(arm.scaler, device);
        }
    }
    std::string unsupported() const override {
        if (::ampbench::autocast::autocastSupported(device().type(), dtype())) {
            return {};
        }
        return config::toString(kind()) + " autocast is not supported on " +
               c10::DeviceTypeName(device().type(), /*lower_case=*/true) +
               " by this LibTorch (1.13 CPU autocast takes bf16 only): use amp-bf16 or run on "
               "CUDA";
    }
    void backward(const at::Tensor& loss, int accumulation) const override {
        auto scaled = accumulation > 1 ? loss / static_cast<double>(accumulation) : loss;
        if (scaler_) {
            scaled = scaler_->scale(scaled);
        }
        scaled.backward();
    }
    LossScaler* scaler() const override { return scaler_.get(); }
    /// On CUDA the built-in models' LayerNorm-then-Linear goes through the fused
    /// kernels (HalfLinears); elsewhere, and for a model file, nothing changes.
    void prepare(models::Network& model) override {
        if (device().is_cuda()) {
            layers_ = std::make_unique<HalfLinears>(dtype());
            model.setLinearHook(layers_.get());
        }
    }

  private:
    std::unique_ptr<LossScaler> scaler_;
    std::unique_ptr<HalfLinears> layers_;
};

/// pure-fp16, a negative control: the model's floating-point parameters, buffers and
/// inputs in half, no fp32 master weights, no autocast, no loss scaling.
class PureFp16Format : public amp::Precision {
  public:
    explicit PureFp16Format(c10::Device device)
        : amp::Precision(config::Precision::PureFp16, false, at::kHalf, device) {}
    std::string unsupported() const override {
        return device().is_cuda() ? std::string()
                                  : "pure-fp16 runs on CUDA only (half-precision kernels on the "
                                    "CPU are missing in LibTorch)";
    }
    void prepare(models::Network& model) override {
        at::NoGradGuard no_grad;
        for (const auto& list : {model.parameters(), model.buffers()}) {
            for (auto t : list) {
                if (at::isFloatingType(t.scalar_type())) {
                    t.set_data(t.to(at::kHalf));  // integer buffers stay as they are
                }
            }
        }
    }
    at::Tensor input(const at::Tensor& x) const override {
        return at::isFloatingType(x.scalar_type()) ? x.to(at::kHalf) : x;
    }
};

/// fp8: the model's Linear layers through Fp8Linears, everything else under bf16
/// autocast; fp32 master weights, no loss scaler.
class Fp8Format : public amp::Precision {
  public:
    Fp8Format(const config::ArmSpec& arm, c10::Device device, int64_t rows)
        : amp::Precision(config::Precision::Fp8, true, at::kBFloat16, device),
          arm_(arm),
          rows_(rows) {}
    std::string unsupported() const override { return fp8Unavailable(device()); }
    void prepare(models::Network& model) override {
        layers_ = std::make_unique<Fp8Linears>(model, arm_, device(), rows_);
        if (layers_->plan().empty()) {
            throw std::runtime_error(
                "fp8 computes the Linear layers of the built-in models, and this model has "
                "none it can reach (a model file's layers run inside TorchScript)");
        }
        model.setLinearHook(layers_.get());
    }
    std::vector<std::string> startNotes() const override {
        if (!layers_) {
            return {};
        }
        const bool delayed = arm_.fp8_recipe == config::Fp8Recipe::Delayed;
        return {"fp8: " + describe(layers_->plan()) + "; " +
                (delayed ? "delayed scaling over the last " + std::to_string(arm_.fp8_history) +
                               " casts"
                         : std::string("current scaling")) +
                (arm_.fp8_margin > 0 ? ", margin 2^" + std::to_string(arm_.fp8_margin) : "") +
                "; everything else under bf16 autocast"};
    }
    void beforeRecordedStep() override {
        if (layers_) {
            layers_->countNextStep();
        }
    }
    std::vector<run::NumericsRecord> recordedStep(int64_t step) override {
        return layers_ ? layers_->takeCastRecords(step) : std::vector<run::NumericsRecord>{};
    }

  private:
    config::ArmSpec arm_;
    int64_t rows_;
    std::unique_ptr<Fp8Linears> layers_;
};

}  // namespace

std::unique_ptr<Precision> Precision::make(config::Precision precision, const config::ArmSpec& arm,
                                           c10::Device device, int64_t linear_rows) {
    switch (precision) {
        case config::Precision::AmpFp16:
        case config::Precision::AmpBf16:
            return std::make_unique<AutocastFormat>(precision, arm, device);
        case config::Precision::PureFp16:
            return std::make_unique<PureFp16Format>(device);
        case config::Precision::Fp8:
            return std::make_unique<Fp8Format>(arm, device, linear_rows);
        case config::Precision::Amp:
            // Planning resolves amp (config::planArm); a format is made for what it chose.
            throw std::logic_error("amp::Precision::make: 'amp' must be resolved by planning");
        case config::Precision::Fp32:
            break;
    }
    return std::make_unique<Fp32Format>(device);
}

std::string Precision::unsupported() const {
    return {};
}

void Precision::backward(const at::Tensor& loss, int accumulation) const {
    (accumulation > 1 ? loss / static_cast<double>(accumulation) : loss).backward();
}

at::Tensor Precision::scaleInUse() const {
    return scaler() ? scaler()->scaleTensor().clone() : at::Tensor();
}

std::string Precision::scalerKind() const {
    if (!scaler()) {
        return {};
    }
    return scaler()->fused() ? "ATen's fused kernels" : "portable tensor ops";
}

}  // namespace ampbench::amp
