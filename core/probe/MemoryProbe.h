#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include <c10/core/Device.h>

namespace ampbench::probe {

struct MemorySample {
    int64_t allocated = 0;  ///< bytes held by tensors (CUDA: the device's; CPU: the run's, or
                            ///< the process's resident set without a CpuTensorAccount)
    int64_t reserved = 0;   ///< CUDA: bytes held by the caching allocator; CPU: as allocated
    int64_t peak = 0;       ///< the highest `allocated` since the last reset
};

/// What a run's memory figures measure, as its environment records it (the
/// Environment's `memory`; analysis::memoryMeasure reads it back).
inline constexpr const char* kMemoryAllocator = "allocator";  ///< CUDA caching allocator
inline constexpr const char* kMemoryTensors = "tensors";      ///< the run's own CPU tensors
inline constexpr const char* kMemoryResident = "resident";    ///< the process's resident set

/// The bytes a CPU run's tensors hold, counted from now until it is destroyed: LibTorch's
/// CPU allocator reports each allocation and free (c10's reportMemoryUsage) to the
/// memory reporter of the thread that makes it, and this account is that reporter on
/// the thread that opens it and on the threads that thread starts carrying its debug
/// information (data::Prefetcher does). So a desktop's own memory, another run's
/// set-up check and what the process held before stay out of the figure, which the
/// process's resident set took in. Open and destroy it on one thread, after the data
/// it must not count is loaded and before the tensors it counts are made; they should
/// be gone before it is. Thread-safe counters.
class CpuTensorAccount {
  public:
    CpuTensorAccount();
    ~CpuTensorAccount();
    CpuTensorAccount(const CpuTensorAccount&) = delete;
    CpuTensorAccount& operator=(const CpuTensorAccount&) = delete;
    /// Bytes the counted tensors hold now.
    int64_t current() const;
    /// The most they held since the account opened or resetPeak().
    int64_t peak() const;
    void resetPeak();

  private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

/// Reads memory use without synchronising the device. CUDA: the caching
/// allocator's statistics. CPU: the run's CpuTensorAccount where it has one, else
/// /proc/self/status VmRSS and VmHWM (reset through /proc/self/clear_refs where the
/// kernel allows it), which count the whole process.
class MemoryProbe {
  public:
    /// `account`: a CPU run's own, which must outlive the probe; null reads the
    /// process's resident set on the CPU.
    explicit MemoryProbe(c10::Device device, CpuTensorAccount* account = nullptr);
    /// What sample() measures: kMemoryAllocator, kMemoryTensors or kMemoryResident.
    const char* measure() const;
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
    CpuTensorAccount* account_;
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
