#include "core/probe/MemoryProbe.h"

#include <unistd.h>
#include <algorithm>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>

#include <c10/core/Allocator.h>
#include <c10/util/ThreadLocalDebugInfo.h>

#ifdef AMPBENCH_WITH_CUDA
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <torch/version.h>
#endif

namespace ampbench::probe {
namespace {

/// Value in bytes of a "Key:   123 kB" line of /proc/self/status, or 0.
int64_t procStatusBytes(const char* key) {
    FILE* f = std::fopen("/proc/self/status", "r");
    if (!f) {
        return 0;
    }
    char line[256];
    const size_t klen = std::strlen(key);
    int64_t kb = 0;
    while (std::fgets(line, sizeof line, f)) {
        if (std::strncmp(line, key, klen) == 0 && line[klen] == ':') {
            kb = std::strtoll(line + klen + 1, nullptr, 10);
            break;
        }
    }
    std::fclose(f);
    return kb * 1024;
}

#ifdef AMPBENCH_WITH_CUDA
#if TORCH_VERSION_MAJOR >= 2
constexpr auto kAggregate = static_cast<size_t>(c10::CachingAllocator::StatType::AGGREGATE);
#else
constexpr auto kAggregate =
    static_cast<size_t>(c10::cuda::CUDACachingAllocator::StatType::AGGREGATE);
#endif
#endif

/// The reporter LibTorch's CPU allocator calls on every allocation (positive size) and
/// free (negative) made on a thread that carries it.
class TensorBytes final : public c10::MemoryReportingInfoBase {
  public:
    void reportMemoryUsage(void* /*ptr*/, int64_t size, int64_t /*total_allocated*/,
                           int64_t /*total_reserved*/, c10::Device device) override {
        if (device.type() != c10::DeviceType::CPU) {
            return;
        }
        const int64_t now = current_.fetch_add(size, std::memory_order_relaxed) + size;
        int64_t high = peak_.load(std::memory_order_relaxed);
        while (now > high && !peak_.compare_exchange_weak(high, now, std::memory_order_relaxed)) {
        }
    }
    bool memoryProfilingEnabled() const override { return true; }
    int64_t current() const { return std::max<int64_t>(0, current_.load()); }
    int64_t peak() const { return std::max<int64_t>(0, peak_.load()); }
    void resetPeak() { peak_.store(current_.load()); }

  private:
    std::atomic<int64_t> current_{0};
    std::atomic<int64_t> peak_{0};
};

}  // namespace

struct CpuTensorAccount::Impl {
    std::shared_ptr<TensorBytes> bytes = std::make_shared<TensorBytes>();
    // The allocator's reports reach the reporter of the PROFILER_STATE slot.
    c10::DebugInfoGuard guard{c10::DebugInfoKind::PROFILER_STATE, bytes};
};

CpuTensorAccount::CpuTensorAccount() : impl_(std::make_unique<Impl>()) {}

CpuTensorAccount::~CpuTensorAccount() = default;

int64_t CpuTensorAccount::current() const {
    return impl_->bytes->current();
}

int64_t CpuTensorAccount::peak() const {
    return impl_->bytes->peak();
}

void CpuTensorAccount::resetPeak() {
    impl_->bytes->resetPeak();
}

MemoryProbe::MemoryProbe(c10::Device device, CpuTensorAccount* account)
    : device_(device), account_(device.is_cpu() ? account : nullptr) {
#ifdef AMPBENCH_WITH_CUDA
    if (device_.is_cuda()) {
        // The allocator's per-device statistics exist only once it has served the
        // device: a fresh process would otherwise get "invalid device argument".
        (void)at::zeros({1}, at::TensorOptions().device(device_));
    }
#endif
}

const char* MemoryProbe::measure() const {
    return device_.is_cuda() ? kMemoryAllocator : account_ ? kMemoryTensors : kMemoryResident;
}

bool MemoryProbe::resetPeak() {
    peak_floor_ = 0;
    if (account_) {
        account_->resetPeak();
        return true;
    }
#ifdef AMPBENCH_WITH_CUDA
    if (device_.is_cuda()) {
        c10::cuda::CUDACachingAllocator::resetPeakStats(device_.index() < 0 ? 0 : device_.index());
        return true;
    }
#endif
    std::ofstream clear("/proc/self/clear_refs");
    if (!clear) {
        return false;
    }
    clear << "5";
    return static_cast<bool>(clear.flush());
}

MemorySample MemoryProbe::sample() const {
    MemorySample s;
#ifdef AMPBENCH_WITH_CUDA
    if (device_.is_cuda()) {
        auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(
            device_.index() < 0 ? 0 : device_.index());
        s.allocated = stats.allocated_bytes[kAggregate].current;
        s.reserved = stats.reserved_bytes[kAggregate].current;
        s.peak = std::max(peak_floor_, stats.allocated_bytes[kAggregate].peak);
        return s;
    }
#endif
    if (account_) {
        s.allocated = account_->current();
        s.reserved = s.allocated;
        s.peak = std::max(peak_floor_, account_->peak());
        return s;
    }
    s.allocated = procStatusBytes("VmRSS");
    s.reserved = s.allocated;
    s.peak = std::max(peak_floor_, procStatusBytes("VmHWM"));
    return s;
}

void MemoryProbe::forgetPeakSince(int64_t before) {
    if (resetPeak()) {
        peak_floor_ = before;
    }
}

void MemoryProbe::releaseCache() {
#ifdef AMPBENCH_WITH_CUDA
    if (device_.is_cuda()) {
        c10::cuda::CUDACachingAllocator::emptyCache();
    }
#endif
}

int64_t physicalMemoryBytes() {
    long pages = sysconf(_SC_PHYS_PAGES);
    long size = sysconf(_SC_PAGE_SIZE);
    return pages > 0 && size > 0 ? static_cast<int64_t>(pages) * size : 0;
}

int64_t deviceMemoryBytes(c10::Device device) {
#ifdef AMPBENCH_WITH_CUDA
    if (device.is_cuda()) {
        const auto index = device.has_index() ? device.index() : c10::DeviceIndex(0);
        return static_cast<int64_t>(at::cuda::getDeviceProperties(index)->totalGlobalMem);
    }
#endif
    (void)device;
    return physicalMemoryBytes();
}

int64_t residentBytes() {
    return procStatusBytes("VmRSS");
}

int64_t peakResidentBytes() {
    return procStatusBytes("VmHWM");
}

bool releaseFreedHeap() {
#if defined(__GLIBC__)
    malloc_trim(0);  // every arena, and whole free pages inside the heap too
    return true;
#else
    return false;
#endif
}

CpuPeakWindow startCpuPeakWindow(int64_t tolerance) {
    CpuPeakWindow w;
    releaseFreedHeap();
    bool reset = false;
    // Another thread of the process (the desktop repainting) may free memory between
    // the reset and the reads, leaving the peak above the set it was reset to: reset
    // again, a few times, before calling the window unmeasurable.
    for (int attempt = 0; attempt < 5; ++attempt) {
        if (attempt > 0) {
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        reset = MemoryProbe(c10::Device(c10::kCPU)).resetPeak();
        w.resident = residentBytes();
        w.peak = peakResidentBytes();
        if (!reset || w.resident <= 0 || w.peak <= 0 || w.peak - w.resident <= tolerance) {
            break;
        }
    }
    if (w.resident <= 0 || w.peak <= 0) {
        w.problem = "/proc/self/status gives no VmRSS and VmHWM";
    } else if (!reset) {
        w.problem = "cannot write /proc/self/clear_refs to reset the peak resident set";
    } else if (w.peak - w.resident > tolerance) {
        w.problem = "the peak resident set did not reset (VmHWM " + std::to_string(w.peak >> 20) +
                    " MiB against VmRSS " + std::to_string(w.resident >> 20) +
                    " MiB right after writing /proc/self/clear_refs)";
    }
    return w;
}

}  // namespace ampbench::probe
