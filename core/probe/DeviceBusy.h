#pragma once
#include <c10/core/Device.h>

#include <memory>
#include <optional>

namespace ampbench::probe {

/// How long the device works on one training step when nothing keeps it waiting: a
/// probe step is queued behind a hold (a kernel that spins until the host has queued
/// the whole step), so the step's kernels run back to back, and the events around
/// them give its device time. Compared with the step's usual time this says how busy
/// the device is during a step: on a launch-bound model most of the step is the
/// device waiting for the host's next launch, and AMP's faster arithmetic cannot
/// shorten it. CUDA only; on the CPU nothing is measured.
///
/// A probe counts only when the hold still held when the host had queued the step.
/// If the host waited for the device inside the step (a read-back), or the launch
/// queue filled up behind the hold, the hold lets go after a timeout and that probe
/// is dropped.
class DeviceBusy {
  public:
    explicit DeviceBusy(c10::Device device);
    ~DeviceBusy();
    DeviceBusy(const DeviceBusy&) = delete;
    DeviceBusy& operator=(const DeviceBusy&) = delete;

    /// Whether this build and device can measure (a CUDA device in a CUDA build).
    bool available() const;
    /// Before the host queues a probe step: the hold, then the step's start event.
    void hold();
    /// After the host has queued the step: its stop event, then the hold lets go.
    /// With `count` false (a step cut short) the probe is dropped.
    void release(bool count = true);
    /// Waits for the probes' events. The median device time of one step in
    /// milliseconds over the probes that counted; nullopt when none did.
    std::optional<double> stepDeviceMs();
    /// Probe steps held so far, and those of them that counted (after stepDeviceMs).
    int probes() const;
    int counted() const;
    /// How long a hold waits for the host at most.
    static constexpr double kHoldTimeoutMs = 250.0;

  private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace ampbench::probe
