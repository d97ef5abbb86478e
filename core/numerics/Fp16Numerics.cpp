#include "core/numerics/Fp16Numerics.h"

#include <ATen/ATen.h>

#include <cmath>
#include <limits>

namespace ampbench::numerics {

std::string dtypeName(c10::ScalarType type) {
    switch (type) {
        case at::kFloat:
            return "float32";
        case at::kHalf:
            return "float16";
        case at::kBFloat16:
            return "bfloat16";
        case at::kDouble:
            return "float64";
        default:
            return c10::toString(type);
    }
}

Observation::Observation(run::NumericsKind kind, int64_t step, double multiplier, double loss_scale)
    : kind_(kind), step_(step), multiplier_(multiplier), loss_scale_(loss_scale) {}

void Observation::add(const std::string& name, const at::Tensor& tensor) {
    run::NumericsRecord r;
    r.step = step_;
    r.kind = kind_;
    r.name = name;
    r.loss_scale = loss_scale_;
    r.dtype = dtypeName(tensor.scalar_type());
    r.numel = tensor.numel();
    records_.push_back(std::move(r));
    if (tensor.numel() == 0) {
        return;
    }
    at::NoGradGuard no_grad;
    const at::Tensor t = tensor.detach();
    at::Tensor a = t.abs();
    if (a.scalar_type() != at::kFloat && a.scalar_type() != at::kDouble) {
        a = a.to(at::kFloat);  // half and bfloat16 compare exactly in float32
    }
    // Compared against the thresholds divided by the multiplier, so no scaled copy of
    // the tensor is made; NaN compares false and so is never an underflow.
    const auto sub = at::logical_and(a > 0, a < run::kFp16MinSubnormal / multiplier_).sum();
    const auto normal = at::logical_and(a > 0, a < run::kFp16MinNormal / multiplier_).sum();
    const auto nonfinite = t.numel() - at::isfinite(t).sum();
    const auto absmax = at::nan_to_num(a, std::numeric_limits<double>::infinity()).max();
    parts_.push_back(at::stack({absmax.to(at::kDouble), sub.to(at::kDouble), normal.to(at::kDouble),
                                nonfinite.to(at::kDouble)}));
}

std::vector<run::NumericsRecord> Observation::finish() {
    constexpr double kInf = std::numeric_limits<double>::infinity();
    std::vector<run::NumericsRecord> out = std::move(records_);
    records_.clear();
    at::Tensor host;
    if (!parts_.empty()) {
        host = at::stack(parts_).to(at::kCPU).contiguous();  // the one read-back
        parts_.clear();
    }
    const double* v = host.defined() ? host.data_ptr<double>() : nullptr;
    size_t row = 0;
    for (auto& r : out) {
        if (r.numel == 0) {
            r.headroom_log2 = kInf;
            continue;
        }
        const double* x = v + 4 * row++;
        const double n = static_cast<double>(r.numel);
        r.nonfinite = static_cast<int64_t>(x[3]);
        r.absmax = r.nonfinite > 0 ? kInf : x[0] * multiplier_;
        r.underflow_subnormal = x[1] / n;
        r.underflow_normal = x[2] / n;
        r.headroom_log2 = r.absmax > 0 ? std::log2(run::kFp16Max / r.absmax) : kInf;
    }
    return out;
}

std::vector<run::NumericsRecord> observe(const NamedTensors& tensors, run::NumericsKind kind,
                                         int64_t step, double multiplier, double loss_scale) {
    Observation o(kind, step, multiplier, loss_scale);
    for (const auto& [name, tensor] : tensors) {
        o.add(name, tensor);
    }
    return o.finish();
}

}  // namespace ampbench::numerics
