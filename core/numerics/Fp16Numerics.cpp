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

std::vector<run::NumericsRecord> observe(const NamedTensors& tensors, run::NumericsKind kind,
                                         int64_t step, double multiplier, double loss_scale) {
    constexpr double kInf = std::numeric_limits<double>::infinity();
    std::vector<run::NumericsRecord> out;
    std::vector<at::Tensor>
        parts;  // per observed tensor: absmax, < subnormal, < normal, non-finite
    out.reserve(tensors.size());
    for (const auto& [name, tensor] : tensors) {
        run::NumericsRecord r;
        r.step = step;
        r.kind = kind;
        r.name = name;
        r.loss_scale = loss_scale;
        r.dtype = dtypeName(tensor.scalar_type());
        r.numel = tensor.numel();
        out.push_back(std::move(r));
        if (tensor.numel() == 0) {
            continue;
        }
        at::NoGradGuard no_grad;
        at::Tensor a = tensor.detach().abs();
        if (a.scalar_type() != at::kFloat && a.scalar_type() != at::kDouble) {
            a = a.to(at::kFloat);  // half and bfloat16 compare exactly in float32
        }
        // Compared against the thresholds divided by the multiplier, so no scaled copy
        // of the tensor is made; NaN compares false and so is never an underflow.
        const auto sub = at::logical_and(a > 0, a < run::kFp16MinSubnormal / multiplier).sum();
        const auto normal = at::logical_and(a > 0, a < run::kFp16MinNormal / multiplier).sum();
        const auto nonfinite = tensor.numel() - at::isfinite(tensor.detach()).sum();
        const auto absmax = at::nan_to_num(a, kInf).max();
        parts.push_back(at::stack({absmax.to(at::kDouble), sub.to(at::kDouble),
                                   normal.to(at::kDouble), nonfinite.to(at::kDouble)}));
    }
    if (parts.empty()) {
        for (auto& r : out) {
            r.headroom_log2 = kInf;
        }
        return out;
    }
    const at::Tensor host = at::stack(parts).to(at::kCPU).contiguous();  // the one read-back
    const double* v = host.data_ptr<double>();
    size_t row = 0;
    for (auto& r : out) {
        if (r.numel == 0) {
            r.headroom_log2 = kInf;
            continue;
        }
        const double* x = v + 4 * row++;
        const double n = static_cast<double>(r.numel);
        r.nonfinite = static_cast<int64_t>(x[3]);
        r.absmax = r.nonfinite > 0 ? kInf : x[0] * multiplier;
        r.underflow_subnormal = x[1] / n;
        r.underflow_normal = x[2] / n;
        r.headroom_log2 = r.absmax > 0 ? std::log2(run::kFp16Max / r.absmax) : kInf;
    }
    return out;
}

}  // namespace ampbench::numerics
