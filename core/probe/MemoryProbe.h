#pragma once
#include <cstdint>
#include <string>

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
    /// After work that is no part of training (a broken step's replay): the peak it
    /// made is forgotten. The peak restarts from now but never reads below `before`,
    /// the sample's peak taken before that work.
    void forgetPeakSince(int64_t before);
    /// Releases cached blocks back to the driver (CUDA); no-op on CPU.
    void releaseCache();

  private:
    c10::Device device_;
    int64_t peak_floor_ = 0;  // the peak before forgotten work
};

/// Bytes of physical memory on this machine.
int64_t physicalMemoryBytes();

/// Bytes of memory a device has in all: the GPU's (CUDA), physical memory (CPU).
int64_t deviceMemoryBytes(c10::Device device);

/// This process's resident set now (VmRSS), in bytes; 0 where unknown.
int64_t residentBytes();

/// Returns the heap's free pages to the system (glibc's malloc_trim), so that the
/// resident set holds what is in use and not what an earlier, larger allocation
/// left behind. False where the C library has no such call.
bool releaseFreedHeap();

/// The start of a CPU peak window whose reset was checked.
struct CpuPeakWindow {
    int64_t resident = 0;  ///< VmRSS right after the reset
    int64_t peak = 0;      ///< VmHWM right after the reset
    std::string problem;   ///< why the window is not usable; empty when it is
    bool ok() const { return problem.empty(); }
};

/// Releases the freed heap (releaseFreedHeap), resets the peak resident set
/// (/proc/self/clear_refs) and verifies that it took: VmHWM must then be within
/// `tolerance` bytes of VmRSS. Otherwise `problem` says what failed (no permission
/// to write clear_refs, a kernel that ignores it, no /proc).
CpuPeakWindow startCpuPeakWindow(int64_t tolerance);

/// VmHWM now, in bytes; 0 where unknown.
int64_t peakResidentBytes();

}  // namespace ampbench::probe
