#include "core/numerics/Fp16Numerics.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <limits>

#if AMPBENCH_WITH_CUDA
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include "core/numerics/TensorStatsCuda.h"
#endif

namespace ampbench::numerics {
namespace {

/// Elements a statistic works on at once (its temporaries: about 8 bytes each).
constexpr int64_t kSlice = int64_t{1} << 23;
/// The fused kernel's slots are made this many at a time (one fill each).
constexpr int64_t kSlotChunk = 64;

}  // namespace

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

Observation::Observation(run::NumericsKind kind, int64_t step, double multiplier, double loss_scale,
                         Kernels kernels)
    : kind_(kind),
      step_(step),
      multiplier_(multiplier),
      loss_scale_(loss_scale),
      kernels_(kernels) {}

bool Observation::addFused(const at::Tensor& t) {
#if AMPBENCH_WITH_CUDA
    if (kernels_ != Kernels::Fused || !t.is_cuda() || !t.is_non_overlapping_and_dense()) {
        return false;
    }
    cuda::Element element;
    switch (t.scalar_type()) {
        case at::kFloat:
            element = cuda::Element::Float;
            break;
        case at::kHalf:
            element = cuda::Element::Half;
            break;
        case at::kBFloat16:
            element = cuda::Element::BFloat16;
            break;
        default:
            return false;
    }
    const c10::cuda::CUDAGuard guard(t.device());
    if (slots_used_ % kSlotChunk == 0) {
        slots_.push_back(at::zeros({kSlotChunk, cuda::kSlotWidth},
                                   at::TensorOptions().dtype(at::kLong).device(t.device())));
    }
    auto* slot = reinterpret_cast<unsigned long long*>(slots_.back().data_ptr<int64_t>()) +
                 (slots_used_ % kSlotChunk) * cuda::kSlotWidth;
    // Compared in float: exact for every value of the three dtypes and for the limits
    // (powers of two, divided by the multiplier).
    cuda::accumulateStats(t.data_ptr(), element, t.numel(),
                          static_cast<float>(run::kFp16MinSubnormal / multiplier_),
                          static_cast<float>(run::kFp16MinNormal / multiplier_), slot,
                          c10::cuda::getCurrentCUDAStream(t.device().index()).stream());
    parts_.emplace_back();
    part_slot_.push_back(slots_used_++);
    return true;
#else
    (void)t;
    return false;
#endif
}

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
    const at::Tensor t = tensor.dim() == 0 ? tensor.detach().reshape({1}) : tensor.detach();
    if (addFused(t)) {
        return;
    }
    const int64_t n = t.numel();
    // The thresholds divided by the multiplier, so no scaled copy is made. Compared in
    // the tensor's own dtype, where powers of two down to 2^-24 are exact (half and
    // bfloat16 alike), unless a multiplier pushes them below half's range.
    const bool widen = multiplier_ != 1.0 && t.scalar_type() == at::kHalf;
    const at::Tensor& limits = thresholds(widen ? at::kFloat : t.scalar_type(), t.device());
    at::Tensor absmax, counts;
    // In slices of the first dimension (views, whatever the layout), so the temporaries
    // stay near kSlice elements however large the tensor: a language model's logits are
    // gigabytes, and whole-tensor temporaries of them raised a run's peak memory.
    const int64_t rows = t.size(0);
    const int64_t step =
        std::max<int64_t>(1, kSlice / std::max<int64_t>(1, n / std::max<int64_t>(rows, 1)));
    for (int64_t begin = 0; begin < rows; begin += step) {
        const at::Tensor part = t.slice(0, begin, std::min(rows, begin + step));
        at::Tensor a = part.abs();
        if (widen) {
            a = a.to(at::kFloat);
        }
        // One comparison against the four limits and one sum: |x| under the smallest
        // positive value (zeros), under 2^-24, under 2^-14, under infinity (finite).
        // NaN compares false everywhere: never an underflow, never finite.
        const at::Tensor c = at::lt(a.reshape({1, -1}), limits.reshape({4, 1})).sum(1);
        const at::Tensor x = a.max();  // NaN wins; non-finite values are counted apart
        counts = counts.defined() ? counts + c : c;
        absmax = absmax.defined() ? at::maximum(absmax, x) : x;
    }
    parts_.push_back(at::cat({absmax.to(at::kDouble).reshape({1}), counts.to(at::kDouble)}));
    part_slot_.push_back(-1);
}

at::Tensor Observation::gather() {
    if (slots_used_ == 0) {
        return at::stack(parts_);
    }
    at::Tensor all = slots_.size() == 1 ? slots_.front() : at::cat(slots_);
    all = all.narrow(0, 0, slots_used_);
    // The largest magnitude's float bits (under 2^31) back to a float, then as the
    // ATen parts are: absmax, then the counts.
    const at::Tensor absmax =
        all.select(1, 4).to(at::kInt).view(at::kFloat).to(at::kDouble).unsqueeze(1);
    const at::Tensor fused = at::cat({absmax, all.narrow(1, 0, 4).to(at::kDouble)}, 1);
    slots_.clear();
    slots_used_ = 0;
    if (fused.size(0) == static_cast<int64_t>(parts_.size())) {
        return fused;  // every part fused, in order
    }
    for (size_t i = 0; i < parts_.size(); ++i) {
        if (part_slot_[i] >= 0) {
            parts_[i] = fused[part_slot_[i]];
        }
    }
    return at::stack(parts_);
}

const at::Tensor& Observation::thresholds(c10::ScalarType dtype, c10::Device device) {
    for (const auto& [type, where, values] : thresholds_) {
        if (type == dtype && where == device) {
            return values;
        }
    }
    // The smallest positive value of the dtype, so |x| below it is an exact zero.
    double smallest = std::numeric_limits<double>::denorm_min();
    if (dtype == at::kHalf) {
        smallest = run::kFp16MinSubnormal;
    } else if (dtype == at::kBFloat16) {
        smallest = std::ldexp(1.0, -133);
    } else if (dtype == at::kFloat) {
        smallest = std::numeric_limits<float>::denorm_min();
    }
    // Filled on the device: no copy from the host that could wait for its queue.
    at::Tensor values = at::empty({4}, at::TensorOptions().dtype(dtype).device(device));
    const double limits[4] = {smallest, run::kFp16MinSubnormal / multiplier_,
                              run::kFp16MinNormal / multiplier_,
                              std::numeric_limits<double>::infinity()};
    for (int i = 0; i < 4; ++i) {
        values[i].fill_(limits[i]);
    }
    thresholds_.emplace_back(dtype, device, std::move(values));
    return std::get<2>(thresholds_.back());
}

void Observation::useLossScale(const at::Tensor& scale) {
    // A copy even where the dtype matches: the scaler updates its tensor in place.
    scale_ = scale.detach().reshape({1}).to(at::kDouble, /*non_blocking=*/false, /*copy=*/true);
}

void Observation::post() {
    if (readback_) {
        return;
    }
    std::vector<at::Tensor> flat;
    if (!parts_.empty()) {
        flat.push_back(gather().reshape({-1}));
    }
    if (scale_.defined()) {
        flat.push_back(scale_);  // last
    }
    if (!flat.empty()) {
        readback_ = std::make_shared<probe::HostReadback>();
        readback_->post(flat.size() == 1 ? flat[0] : at::cat(flat));
        parts_.clear();
        part_slot_.clear();
    }
}

void Observation::wait() const {
    if (readback_) {
        readback_->wait();
    }
}

std::vector<run::NumericsRecord> Observation::finish() {
    constexpr double kInf = std::numeric_limits<double>::infinity();
    std::vector<run::NumericsRecord> out = std::move(records_);
    records_.clear();
    post();  // the one read-back
    const std::vector<double> values = readback_ ? readback_->take() : std::vector<double>{};
    readback_.reset();
    if (scale_.defined() && !values.empty()) {
        loss_scale_ = values.back();
        scale_ = at::Tensor();
        for (auto& r : out) {
            r.loss_scale = loss_scale_;
        }
    }
    const double* v = values.data();
    size_t row = 0;
    for (auto& r : out) {
        if (r.numel == 0) {
            r.headroom_log2 = kInf;
            continue;
        }
        // absmax, then the counts under: the smallest positive value, 2^-24, 2^-14, inf.
        const double* x = v + 5 * row++;
        const double n = static_cast<double>(r.numel);
        r.nonfinite = r.numel - static_cast<int64_t>(x[4]);
        r.absmax = r.nonfinite > 0 ? kInf : x[0] * multiplier_;
        r.underflow_subnormal = (x[2] - x[1]) / n;
        r.underflow_normal = (x[3] - x[1]) / n;
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
