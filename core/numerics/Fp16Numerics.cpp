#include "core/numerics/Fp16Numerics.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

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

/// The value of a non-negative bit pattern of `dtype` (float, half, bfloat16), up to
/// its +inf; bit patterns of non-negative values order as the values do.
double valueOfBits(c10::ScalarType dtype, uint32_t bits) {
    if (dtype == at::kHalf) {
        const uint32_t exponent = (bits >> 10) & 0x1f, mantissa = bits & 0x3ff;
        if (exponent == 0x1f) {
            return std::numeric_limits<double>::infinity();
        }
        return exponent == 0 ? std::ldexp(static_cast<double>(mantissa), -24)
                             : std::ldexp(static_cast<double>(1024 + mantissa),
                                          static_cast<int>(exponent) - 25);
    }
    if (dtype == at::kBFloat16) {
        bits <<= 16;
    }
    float f = 0;
    std::memcpy(&f, &bits, sizeof f);
    return f;
}

/// The bit pattern of `dtype`'s +inf (the last non-negative one that is a number).
uint32_t infinityBits(c10::ScalarType dtype) {
    return dtype == at::kHalf ? 0x7c00u : dtype == at::kBFloat16 ? 0x7f80u : 0x7f800000u;
}

/// The first non-negative bit pattern of `dtype` whose value `keep` holds for (its
/// +inf when none before it does); `keep` must hold from some value on.
template <class Keep>
uint32_t firstBitsWhere(c10::ScalarType dtype, Keep keep) {
    uint32_t lo = 0, hi = infinityBits(dtype);  // the answer is in [lo, hi]
    while (lo < hi) {
        const uint32_t mid = lo + (hi - lo) / 2;
        if (keep(valueOfBits(dtype, mid))) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    return lo;
}

/// Whether `dtype`'s values are compared in double (every type but float, half and
/// bfloat16), where the limits are exact as they are.
bool comparedInDouble(c10::ScalarType dtype) {
    return dtype != at::kHalf && dtype != at::kBFloat16 && dtype != at::kFloat;
}

void requirePositive(double v, const char* what) {
    if (!(v > 0) || !std::isfinite(v)) {
        throw std::invalid_argument(std::string("numerics: the ") + what +
                                    " must be a positive finite number, not " + std::to_string(v));
    }
}

}  // namespace

double roundUpIn(c10::ScalarType dtype, double t) {
    if (comparedInDouble(dtype)) {
        return t;
    }
    return valueOfBits(dtype, firstBitsWhere(dtype, [t](double v) { return v >= t; }));
}

double nextAboveIn(c10::ScalarType dtype, double t) {
    if (comparedInDouble(dtype)) {
        return std::nextafter(t, std::numeric_limits<double>::infinity());
    }
    return valueOfBits(dtype, firstBitsWhere(dtype, [t](double v) { return v > t; }));
}

double roundDownIn(c10::ScalarType dtype, double t) {
    if (comparedInDouble(dtype)) {
        return t;
    }
    // The value just before the first one above t (0 for a negative t).
    const uint32_t above = firstBitsWhere(dtype, [t](double v) { return v > t; });
    return above == 0 ? 0.0 : valueOfBits(dtype, above - 1);
}

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
                         const run::NumberFormat& format, Kernels kernels)
    : kind_(kind),
      step_(step),
      multiplier_(multiplier),
      loss_scale_(loss_scale),
      format_(format),
      kernels_(kernels) {
    requirePositive(multiplier, "multiplier");
}

bool Observation::addFused(const at::Tensor& t, double multiplier) {
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
    // Compared in float, where every value of the three dtypes is exact, with the limits
    // rounded so that each comparison says what it would say exactly.
    cuda::accumulateStats(
        t.data_ptr(), element, t.numel(),
        static_cast<float>(roundUpIn(at::kFloat, format_.smallest_subnormal / multiplier)),
        static_cast<float>(roundUpIn(at::kFloat, format_.smallest_normal / multiplier)),
        static_cast<float>(roundDownIn(at::kFloat, format_.largest / multiplier)), slot,
        c10::cuda::getCurrentCUDAStream(t.device().index()).stream());
    parts_.emplace_back();
    part_slot_.push_back(slots_used_++);
    return true;
#else
    (void)t;
    (void)multiplier;
    return false;
#endif
}

void Observation::add(const std::string& name, const at::Tensor& tensor, double scale) {
    requirePositive(scale, "scale");
    run::NumericsRecord r;
    r.step = step_;
    r.kind = kind_;
    r.name = name;
    r.format = format_.name;
    r.scale = scale;
    r.loss_scale = loss_scale_;
    r.dtype = dtypeName(tensor.scalar_type());
    r.numel = tensor.numel();
    records_.push_back(std::move(r));
    if (tensor.numel() == 0) {
        return;
    }
    at::NoGradGuard no_grad;
    const at::Tensor t = tensor.dim() == 0 ? tensor.detach().reshape({1}) : tensor.detach();
    const double multiplier = multiplier_ * scale;
    if (addFused(t, multiplier)) {
        return;
    }
    const int64_t n = t.numel();
    // The limits divided by the multiplier, so no scaled copy is made, and compared in
    // the tensor's own dtype, rounded so that each comparison is exact.
    const at::Tensor& limits = thresholds(t.scalar_type(), t.device(), multiplier);
    at::Tensor absmax, counts;
    // In slices of the first dimension (views, whatever the layout), so the temporaries
    // stay near kSlice elements however large the tensor: a language model's logits are
    // gigabytes, and whole-tensor temporaries of them raised a run's peak memory.
    const int64_t rows = t.size(0);
    const int64_t step =
        std::max<int64_t>(1, kSlice / std::max<int64_t>(1, n / std::max<int64_t>(rows, 1)));
    for (int64_t begin = 0; begin < rows; begin += step) {
        const at::Tensor part = t.slice(0, begin, std::min(rows, begin + step));
        const at::Tensor a = part.abs();
        // One comparison against the five limits and one sum: |x| under the smallest
        // positive value (zeros), under the format's smallest subnormal and normal, under
        // infinity (finite), and at most its largest. NaN compares false everywhere:
        // never an underflow, never finite, never saturated.
        const at::Tensor c = at::lt(a.reshape({1, -1}), limits.reshape({5, 1})).sum(1);
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
    // ATen parts are: absmax, then the counts, the last one at most the largest
    // (finite values less those above it).
    const at::Tensor absmax =
        all.select(1, 4).to(at::kInt).view(at::kFloat).to(at::kDouble).unsqueeze(1);
    const at::Tensor at_most = (all.select(1, 3) - all.select(1, 5)).unsqueeze(1);
    const at::Tensor fused =
        at::cat({absmax, all.narrow(1, 0, 4).to(at::kDouble), at_most.to(at::kDouble)}, 1);
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

const at::Tensor& Observation::thresholds(c10::ScalarType dtype, c10::Device device,
                                          double multiplier) {
    for (const auto& [type, where, m, values] : thresholds_) {
        if (type == dtype && where == device && m == multiplier) {
            return values;
        }
    }
    // Half, bfloat16 and float compare in their own dtype; any other in double.
    const c10::ScalarType in = comparedInDouble(dtype) ? at::kDouble : dtype;
    // The smallest positive value of the dtype, so |x| below it is an exact zero.
    const double smallest =
        comparedInDouble(dtype) ? std::numeric_limits<double>::denorm_min() : valueOfBits(dtype, 1);
    // Each limit is a value of the dtype: |x| < the smallest value at or above the
    // format's limit / multiplier is |x| < that limit exactly, and |x| < the smallest
    // value above largest / multiplier is |x| <= it.
    const double limits[5] = {smallest, roundUpIn(in, format_.smallest_subnormal / multiplier),
                              roundUpIn(in, format_.smallest_normal / multiplier),
                              std::numeric_limits<double>::infinity(),
                              nextAboveIn(in, format_.largest / multiplier)};
    // Filled on the device: no copy from the host that could wait for its queue.
    at::Tensor values = at::empty({5}, at::TensorOptions().dtype(in).device(device));
    for (int i = 0; i < 5; ++i) {
        values[i].fill_(limits[i]);
    }
    thresholds_.emplace_back(dtype, device, multiplier, std::move(values));
    return std::get<3>(thresholds_.back());
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
        // absmax, then the counts under: the smallest positive value, the smallest
        // subnormal and normal, inf; then the count at most the largest.
        const double* x = v + 6 * row++;
        const double n = static_cast<double>(r.numel);
        r.nonfinite = r.numel - static_cast<int64_t>(x[4]);
        r.absmax = r.nonfinite > 0 ? kInf : x[0] * (multiplier_ * r.scale);
        r.underflow_subnormal = (x[2] - x[1]) / n;
        r.underflow_normal = (x[3] - x[1]) / n;
        r.saturated = (x[4] - x[5]) / n;
        r.headroom_log2 = r.absmax > 0 ? std::log2(format_.largest / r.absmax) : kInf;
    }
    return out;
}

std::vector<run::NumericsRecord> observe(const NamedTensors& tensors, run::NumericsKind kind,
                                         int64_t step, double multiplier, double loss_scale,
                                         const run::NumberFormat& format) {
    Observation o(kind, step, multiplier, loss_scale, format);
    for (const auto& [name, tensor] : tensors) {
        o.add(name, tensor);
    }
    return o.finish();
}

}  // namespace ampbench::numerics
