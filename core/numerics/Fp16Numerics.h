#pragma once
// Where tensors sit in a number format's range (run::NumberFormat: fp16, bf16, the
// FP8 formats): the largest magnitude, the share of values that would flush to zero or
// lose precision, the share past the largest value, the doublings left before
// overflow. One pass over each tensor on the device (one fused kernel on CUDA, a few
// ATen operations elsewhere) and one read-back for all of them.
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <ATen/core/Tensor.h>

#include "core/probe/HostReadback.h"
#include "core/run/NumberFormat.h"
#include "core/run/Numerics.h"

namespace ampbench::numerics {

using NamedTensors = std::vector<std::pair<std::string, at::Tensor>>;

/// How a tensor's statistics are computed: by the fused kernel where the build has
/// CUDA and the tensor is a dense float, half or bfloat16 CUDA tensor, else (and
/// always with Aten) by ATen operations. Both give the same records.
enum class Kernels { Fused, Aten };

/// Tensors' statistics taken on the device as they come (so a later in-place op
/// cannot change them) and read back once, at finish().
class Observation {
  public:
    /// `multiplier`, `loss_scale` and `format` as for observe(). std::invalid_argument
    /// for a multiplier that is not a positive finite number.
    Observation(run::NumericsKind kind, int64_t step, double multiplier, double loss_scale,
                const run::NumberFormat& format = run::kFp16, Kernels kernels = Kernels::Fused);
    /// `scale`: the per-tensor scale the tensor is multiplied by before its cast (an
    /// FP8 layer's), on top of the multiplier; the record keeps it. std::invalid_argument
    /// when it is not a positive finite number.
    void add(const std::string& name, const at::Tensor& tensor, double scale = 1.0);
    const run::NumberFormat& format() const { return format_; }
    bool empty() const { return records_.empty(); }
    /// The loss scale the records give, read from the device with the statistics
    /// (instead of the value given to the constructor).
    void useLossScale(const at::Tensor& scale);
    /// Starts bringing the statistics to the host without waiting for the device
    /// (nothing more may be added); finish() then waits only for that copy.
    void post();
    /// Waits for the copy post() started (if any).
    void wait() const;
    /// The records, in the order added (without post(): one host synchronisation);
    /// leaves it empty.
    std::vector<run::NumericsRecord> finish();

  private:
    run::NumericsKind kind_;
    int64_t step_;
    double multiplier_;
    double loss_scale_;
    run::NumberFormat format_;
    std::vector<run::NumericsRecord> records_;
    Kernels kernels_;
    // Per non-empty tensor: absmax, the counts under the five limits (thresholds()).
    std::vector<at::Tensor> parts_;
    // The fused kernel's counters: chunks of slots (kSlotWidth int64 each), and for
    // each part the slot it is in (-1: an ATen part).
    std::vector<at::Tensor> slots_;
    int64_t slots_used_ = 0;
    std::vector<int64_t> part_slot_;
    bool addFused(const at::Tensor& t, double multiplier);
    at::Tensor gather();                             // every part, [parts, 6] as doubles
    std::shared_ptr<probe::HostReadback> readback_;  // set by post()
    at::Tensor scale_;                               // see useLossScale()
    /// The five limits |x| is compared with (`multiplier` applied), in `dtype` on
    /// `device` (made once for each).
    const at::Tensor& thresholds(c10::ScalarType dtype, c10::Device device, double multiplier);
    std::vector<std::tuple<c10::ScalarType, c10::Device, double, at::Tensor>> thresholds_;
};

/// One record per tensor, in order, against `format`'s range. Each tensor's values are
/// taken times `multiplier` (gradients read before unscaling already hold unscaled ×
/// loss scale: 1; unscaled ones: the loss scale); `loss_scale` is what the records say
/// the scale was. Exact zeros are no underflow (nothing is lost); inf or NaN values
/// count as non-finite (never as saturated) and make absmax +inf and the headroom -inf.
std::vector<run::NumericsRecord> observe(const NamedTensors& tensors, run::NumericsKind kind,
                                         int64_t step, double multiplier, double loss_scale,
                                         const run::NumberFormat& format = run::kFp16);

/// The limits a non-negative value `v` of `dtype` (float, half or bfloat16) is compared
/// with so that the comparison in `dtype` says what it would say in exact arithmetic:
/// the smallest value of the dtype at or above `t` (v < it ⟺ v < t), the largest at or
/// below it (v > it ⟺ v > t; its largest finite value past its range), and the smallest
/// above it (v < it ⟺ v <= t). The first and last are +inf past its range. Any other
/// dtype compares in double: `t` itself (the last: the next double above it).
double roundUpIn(c10::ScalarType dtype, double t);
double roundDownIn(c10::ScalarType dtype, double t);
double nextAboveIn(c10::ScalarType dtype, double t);

/// "float32", "float16", "bfloat16", ... (as Python names torch dtypes).
std::string dtypeName(c10::ScalarType type);

}  // namespace ampbench::numerics
