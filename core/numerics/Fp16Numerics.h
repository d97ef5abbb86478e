#pragma once
// Where tensors sit in fp16's range: the largest magnitude, the share of values that
// would flush to zero or lose precision, the doublings left before overflow. One
// pass of device kernels per tensor and one read-back for all of them.
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <ATen/core/Tensor.h>

#include "core/probe/HostReadback.h"
#include "core/run/Numerics.h"

namespace ampbench::numerics {

using NamedTensors = std::vector<std::pair<std::string, at::Tensor>>;

/// Tensors' statistics taken on the device as they come (so a later in-place op
/// cannot change them) and read back once, at finish().
class Observation {
  public:
    /// `multiplier` and `loss_scale` as for observe().
    Observation(run::NumericsKind kind, int64_t step, double multiplier, double loss_scale);
    void add(const std::string& name, const at::Tensor& tensor);
    bool empty() const { return records_.empty(); }
    /// The loss scale the records give, read from the device with the statistics
    /// (instead of the value given to the constructor).
    void useLossScale(const at::Tensor& scale);
    /// Starts bringing the statistics to the host without waiting for the device
    /// (nothing more may be added); finish() then waits only for that copy.
    void post();
    /// The records, in the order added (without post(): one host synchronisation);
    /// leaves it empty.
    std::vector<run::NumericsRecord> finish();

  private:
    run::NumericsKind kind_;
    int64_t step_;
    double multiplier_;
    double loss_scale_;
    std::vector<run::NumericsRecord> records_;
    std::vector<at::Tensor>
        parts_;  // per non-empty tensor: absmax, counts under the four thresholds
    std::shared_ptr<probe::HostReadback> readback_;  // set by post()
    at::Tensor scale_;                               // see useLossScale()
    /// The four limits |x| is compared with, in `dtype` on `device` (made once).
    const at::Tensor& thresholds(c10::ScalarType dtype, c10::Device device);
    std::vector<std::tuple<c10::ScalarType, c10::Device, at::Tensor>> thresholds_;
};

/// One record per tensor, in order. Each tensor's values are taken times `multiplier`
/// (gradients read before unscaling already hold unscaled × loss scale: 1; unscaled
/// ones: the loss scale); `loss_scale` is what the records say the scale was.
/// Exact zeros are no underflow (nothing is lost); inf or NaN values count as
/// non-finite and make absmax +inf and the headroom -inf.
std::vector<run::NumericsRecord> observe(const NamedTensors& tensors, run::NumericsKind kind,
                                         int64_t step, double multiplier, double loss_scale);

/// "float32", "float16", "bfloat16", ... (as Python names torch dtypes).
std::string dtypeName(c10::ScalarType type);

}  // namespace ampbench::numerics
