#pragma once
#include <c10/core/DeviceType.h>
#include <c10/core/ScalarType.h>

namespace ampbench::autocast {

/// RAII autocast region for one device type, mirroring Python's
/// `torch.autocast.__enter__/__exit__` over both LibTorch APIs (1.13: per-device
/// setters; 2.x: setters taking a DeviceType). On leaving the outermost region the
/// cast cache is cleared, so no stale low-precision weight copy survives an
/// optimizer step. Autocast state is thread-local: use the guard on the thread
/// that runs the forward pass. `enabled=false` makes a region that turns autocast off.
class AutocastGuard {
  public:
    AutocastGuard(c10::DeviceType device, c10::ScalarType dtype, bool enabled = true,
                  bool cache = true);
    ~AutocastGuard();
    AutocastGuard(const AutocastGuard&) = delete;
    AutocastGuard& operator=(const AutocastGuard&) = delete;

    /// Current thread's state for a device type (for tests and diagnostics).
    static bool isEnabled(c10::DeviceType device);
    static c10::ScalarType dtype(c10::DeviceType device);
    static bool cacheEnabled();

  private:
    c10::DeviceType device_;
    bool prev_enabled_;
    c10::ScalarType prev_dtype_;
    bool prev_cache_;
};

/// Whether this LibTorch supports autocast to `dtype` on `device` (1.13 CPU: bf16 only).
bool autocastSupported(c10::DeviceType device, c10::ScalarType dtype);

}  // namespace ampbench::autocast
