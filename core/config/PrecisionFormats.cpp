#include "core/config/PrecisionFormats.h"

#include <stdexcept>

namespace ampbench::config {

const std::vector<PrecisionFormat>& precisionFormats() {
    using P = Precision;
    // id, name, on the CPU, on CUDA, numerics in, autocast, scaler, fuses seeds,
    // negative control, TF32, own fields, what.
    static const std::vector<PrecisionFormat> all = {
        {P::Fp32, "fp32", P::Fp32, P::Fp32, "fp16", false, false, true, false, true, "",
         "the baseline: every value in float32 (TF32 only where the arm asks)"},
        {P::Amp, "amp", P::AmpBf16, P::AmpFp16, "fp16", true, true, true, false, false, "",
         "autocast as PyTorch's default for the device: fp16 with loss scaling on CUDA, bf16 "
         "on the CPU"},
        {P::AmpFp16, "amp-fp16", P::AmpFp16, P::AmpFp16, "fp16", true, true, true, false, false, "",
         "autocast to float16 with dynamic loss scaling; float32 master weights"},
        {P::AmpBf16, "amp-bf16", P::AmpBf16, P::AmpBf16, "bf16", true, false, true, false, false,
         "", "autocast to bfloat16, no loss scaling; float32 master weights"},
        {P::PureFp16, "pure-fp16", P::PureFp16, P::PureFp16, "fp16", false, false, false, true,
         false, "",
         "a negative control: the model itself in float16, no master weights, no autocast, no "
         "loss scaling"},
        {P::Fp8, "fp8", P::Fp8, P::Fp8, "bf16", true, false, false, false, false, "fp8_",
         "the Linear layers in FP8 (e4m3 forward, e5m2 gradients), the rest under bf16 "
         "autocast; CUDA with compute capability 8.9 or later"},
    };
    return all;
}

const PrecisionFormat& formatOf(Precision p) {
    for (const auto& f : precisionFormats()) {
        if (f.id == p) {
            return f;
        }
    }
    throw std::logic_error("config::formatOf: a precision without a row in PrecisionFormats.cpp");
}

const PrecisionFormat* formatOwningField(const std::string& path) {
    for (const auto& f : precisionFormats()) {
        const std::string prefix = f.own_fields;
        if (!prefix.empty() && path.compare(0, prefix.size(), prefix) == 0) {
            return &f;
        }
    }
    return nullptr;
}

bool fieldIsOtherFormats(const std::string& path, Precision p) {
    const PrecisionFormat* owner = formatOwningField(path);
    return owner && std::string(owner->own_fields) != formatOf(p).own_fields;
}

}  // namespace ampbench::config
