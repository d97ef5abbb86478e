#pragma once
#include <cstdint>

#include <c10/core/Device.h>

namespace ampbench::probe {

struct MemorySample {
    int64_t allocated = 0;  ///< CUDA: bytes held by tensors; CPU: resident set
    int64_t reserved = 0;   ///< CUDA: bytes held by the caching allocator; CPU: resident set
    int64_t peak = 0;       ///< CUDA: peak allocated since reset; CPU: peak resident set
};

/// Reads memory use without synchronising the device. CUDA: the caching
/// allocator's statistics. CPU: /proc/self/status VmRSS and VmHWM (reset through
/// /proc/self/clear_refs where the kernel allows it).
class MemoryProbe {
  public:
    explicit MemoryProbe(c10::Device device);
    /// Starts a new peak window. Returns false when the peak could not be reset
    /// (CPU without permission to write clear_refs: the peak is then the process's).
    bool resetPeak();
    MemorySample sample() const;
    /// Releases cached blocks back to the driver (CUDA); no-op on CPU.
    void releaseCache();

  private:
    c10::Device device_;
};

/// Bytes of physical memory on this machine.
int64_t physicalMemoryBytes();

/// Bytes of memory a device has in all: the GPU's (CUDA), physical memory (CPU).
int64_t deviceMemoryBytes(c10::Device device);

/// This process's resident set now (VmRSS), in bytes; 0 where unknown.
int64_t residentBytes();

}  // namespace ampbench::probe
