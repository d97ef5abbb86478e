#pragma once
#include <chrono>
#include <memory>
#include <vector>

#include <c10/core/Device.h>

namespace ampbench::probe {

/// Times steps without forcing a synchronisation per step. On CUDA it records
/// events and reads their elapsed times in `collect()`, which synchronises once for
/// the whole batch; on CPU it reads a steady clock.
///
/// On CUDA, steps that follow each other directly share an event: a step starts at
/// the previous step's stop event, so each step costs one event record instead of
/// two (on a launch-bound model each record is host time added to the step). The
/// chain breaks at `collect()`, `discard()` and `breakChain()`; the next step then
/// records its own start. A chained step's time includes the few microseconds of
/// host work between the two steps.
class StepTimer {
  public:
    explicit StepTimer(c10::Device device);
    ~StepTimer();
    void start();
    void stop();
    /// Drops the step started last (it did not complete).
    void discard();
    /// The next step records its own start (work between the steps, such as an
    /// evaluation, is not part of either).
    void breakChain();
    /// Puts a marker in the device's queue (CUDA; nothing on CPU)...
    void mark();
    /// ...and says, without waiting, whether the device has got to it. False: the
    /// device is behind the host there, so host work done since is hidden behind
    /// the device's (the model is device-bound). Always true on CPU.
    bool markerReached();
    /// Milliseconds of each step stopped since the last collect, in order.
    std::vector<double> collect();
    bool usesDeviceEvents() const;

  private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace ampbench::probe
