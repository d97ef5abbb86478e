#pragma once
#include <ATen/core/Tensor.h>

#include <memory>
#include <vector>

namespace ampbench::probe {

/// A few device values brought to the host without stopping the host's queue ahead
/// of the device: `post` starts the copy (on CUDA into pinned memory, with an event
/// after it) and returns at once; `take` waits only for that copy, not for the work
/// queued since, and returns the values. On CPU the values are read at `post`.
class HostReadback {
  public:
    HostReadback();
    ~HostReadback();
    HostReadback(const HostReadback&) = delete;
    HostReadback& operator=(const HostReadback&) = delete;

    /// Starts reading `values` (any shape, any floating or integer dtype), replacing
    /// what was posted and not taken.
    void post(const at::Tensor& values);
    bool pending() const;
    /// Waits for the copy posted last (nothing to wait for on CPU or when none is pending).
    void wait() const;
    /// The values posted last, flattened, as doubles; empty when nothing is pending.
    std::vector<double> take();

  private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace ampbench::probe
