#pragma once
#include <chrono>
#include <memory>
#include <vector>

#include <c10/core/Device.h>

namespace ampbench::probe {

/// Times steps without forcing a synchronisation per step. On CUDA it records a
/// pair of events per step and reads their elapsed times in `collect()`, which
/// synchronises once for the whole batch; on CPU it reads a steady clock.
class StepTimer {
  public:
    explicit StepTimer(c10::Device device);
    ~StepTimer();
    void start();
    void stop();
    /// Drops the step started last (it did not complete).
    void discard();
    /// Milliseconds of each step stopped since the last collect, in order.
    std::vector<double> collect();
    bool usesDeviceEvents() const;

  private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace ampbench::probe
