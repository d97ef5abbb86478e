#pragma once
#include <functional>
#include <memory>

namespace ampbench::train {

/// A whole training step captured once as a CUDA graph and replayed: one launch
/// per step instead of one per operation, which removes the host's per-op cost
/// from small models. The captured body must only use tensors that live across
/// replays (static inputs, parameters, optimizer and scaler state) and must not
/// synchronise with the host. Available with LibTorch 2.x built with CUDA.
///
/// From construction to destruction the constructing thread's current stream is
/// one side stream that every StepGraph of the process shares: the eager steps
/// before capture, the capture and the replays all run on it. LibTorch keeps a
/// cuBLAS workspace per stream for the life of the process; with one stream it is
/// made once, by the eager steps, outside the graph's private memory pool. (A new
/// stream per graph left about 64 MiB allocated behind every graph run, which
/// later runs then counted in their peak memory.)
class StepGraph {
  public:
    /// Synchronises the device and switches this thread to the capture stream.
    StepGraph();
    /// Synchronises the device and switches back to the previous stream.
    ~StepGraph();
    static bool available();
    /// Captures `body` on the capture stream (the device is synchronised around it).
    /// Throws std::runtime_error with CUDA's reason when capture fails.
    void capture(const std::function<void()>& body);
    /// Launches the captured step on the current stream.
    void replay();
    bool captured() const;

  private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace ampbench::train
