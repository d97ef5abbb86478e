#pragma once
// A kernel that holds a stream until the host lets it go (DeviceBusy). Compiled only
// where LibTorch has CUDA; plain types here, so this header needs neither.
#include <cstdint>

namespace ampbench::probe::cuda {

/// Queues a one-thread kernel on `stream` (a cudaStream_t) that spins until
/// `*release` (host memory the device can read) is non-zero, or until `timeout_ns`
/// have passed on the device's clock; it then writes 0 (released) or 1 (timed out)
/// to `*expired` (host memory too).
void queueHold(const volatile int* release, volatile int* expired, int64_t timeout_ns,
               void* stream);

}  // namespace ampbench::probe::cuda
