#include "core/probe/DeviceBusy.h"

#include <algorithm>
#include <atomic>
#include <vector>

#ifdef AMPBENCH_WITH_CUDA
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>

#include "core/probe/DeviceHoldCuda.h"
#endif

namespace ampbench::probe {

struct DeviceBusy::Impl {
    bool cuda = false;
    int probes = 0;
    int counted = 0;
#ifdef AMPBENCH_WITH_CUDA
    struct Probe {
        cudaEvent_t start = nullptr, stop = nullptr;
        int* flags = nullptr;  // pinned host memory: [release, expired]
    };
    std::vector<Probe> done;
    Probe current;
    ~Impl() {
        for (auto& p : done) {
            free(p);
        }
        free(current);
    }
    static void free(Probe& p) {
        if (p.flags) {
            // The hold must be over before its flags go: let it go and wait for it.
            volatile int* release = p.flags;
            release[0] = 1;
            if (p.stop) {
                cudaEventSynchronize(p.stop);
            }
            cudaFreeHost(p.flags);
        }
        if (p.start) {
            cudaEventDestroy(p.start);
        }
        if (p.stop) {
            cudaEventDestroy(p.stop);
        }
        p = {};
    }
#endif
};

DeviceBusy::DeviceBusy(c10::Device device) : impl_(std::make_unique<Impl>()) {
#ifdef AMPBENCH_WITH_CUDA
    impl_->cuda = device.is_cuda();
#else
    (void)device;
#endif
}

DeviceBusy::~DeviceBusy() = default;

bool DeviceBusy::available() const {
    return impl_->cuda;
}

void DeviceBusy::hold() {
#ifdef AMPBENCH_WITH_CUDA
    if (!impl_->cuda) {
        return;
    }
    auto& p = impl_->current;
    Impl::free(p);
    void* flags = nullptr;
    // Mapped pinned memory: the device reads the release flag the host writes.
    C10_CUDA_CHECK(cudaHostAlloc(&flags, 2 * sizeof(int), cudaHostAllocMapped));
    p.flags = static_cast<int*>(flags);
    p.flags[0] = 0;
    p.flags[1] = -1;
    C10_CUDA_CHECK(cudaEventCreate(&p.start));
    C10_CUDA_CHECK(cudaEventCreate(&p.stop));
    int* device_flags = nullptr;
    C10_CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&device_flags), flags, 0));
    const cudaStream_t stream = c10::cuda::getCurrentCUDAStream().stream();
    cuda::queueHold(device_flags, device_flags + 1, static_cast<int64_t>(kHoldTimeoutMs * 1e6),
                    stream);
    C10_CUDA_CHECK(cudaEventRecord(p.start, stream));
    ++impl_->probes;
#endif
}

void DeviceBusy::release(bool count) {
#ifdef AMPBENCH_WITH_CUDA
    auto& p = impl_->current;
    if (!impl_->cuda || !p.flags) {
        return;
    }
    C10_CUDA_CHECK(cudaEventRecord(p.stop, c10::cuda::getCurrentCUDAStream().stream()));
    std::atomic_thread_fence(std::memory_order_seq_cst);
    volatile int* release = p.flags;
    release[0] = 1;
    if (!count) {
        --impl_->probes;
        Impl::free(p);
        return;
    }
    impl_->done.push_back(p);
    p = {};
#endif
}

std::optional<double> DeviceBusy::stepDeviceMs() {
    std::vector<double> ms;
#ifdef AMPBENCH_WITH_CUDA
    impl_->counted = 0;
    for (auto& p : impl_->done) {
        C10_CUDA_CHECK(cudaEventSynchronize(p.stop));
        const volatile int* expired = p.flags + 1;
        if (*expired != 0) {
            continue;  // the hold timed out: the device may have waited inside the step
        }
        float elapsed = 0;
        C10_CUDA_CHECK(cudaEventElapsedTime(&elapsed, p.start, p.stop));
        ms.push_back(elapsed);
    }
    impl_->counted = static_cast<int>(ms.size());
#endif
    if (ms.empty()) {
        return std::nullopt;
    }
    std::sort(ms.begin(), ms.end());
    const size_t n = ms.size();
    return n % 2 ? ms[n / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]);
}

int DeviceBusy::probes() const {
    return impl_->probes;
}

int DeviceBusy::counted() const {
    return impl_->counted;
}

}  // namespace ampbench::probe
