#pragma once
#include <functional>
#include <memory>

namespace ampbench::train {

/// A whole training step captured once as a CUDA graph and replayed: one launch
/// per step instead of one per operation, which removes the host's per-op cost
/// from small models. The captured body must only use tensors that live across
/// replays (static inputs, parameters, optimizer and scaler state) and must not
/// synchronise with the host. Available with LibTorch 2.x built with CUDA.
class StepGraph {
  public:
    StepGraph();
    ~StepGraph();
    static bool available();
    /// Captures `body` on a side stream (the device is synchronised around it).
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
