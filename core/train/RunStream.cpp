#include "core/train/private/RunStream.h"

#include <map>
#include <mutex>
#include <optional>
#include <vector>

#ifdef AMPBENCH_WITH_CUDA
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

namespace ampbench::train {

#ifdef AMPBENCH_WITH_CUDA
namespace {

/// The process's run streams, by device: made once, lent to one run at a time.
struct Streams {
    std::mutex mutex;
    std::map<int, std::vector<std::pair<c10::cuda::CUDAStream, bool>>> by_device;  // stream, lent

    int lend(c10::DeviceIndex device, std::optional<c10::cuda::CUDAStream>& out) {
        std::lock_guard<std::mutex> lock(mutex);
        auto& list = by_device[device];
        for (size_t i = 0; i < list.size(); ++i) {
            if (!list[i].second) {
                list[i].second = true;
                out.emplace(list[i].first);
                return static_cast<int>(i);
            }
        }
        // A pool stream does not synchronise with the legacy default stream.
        list.emplace_back(c10::cuda::getStreamFromPool(/*isHighPriority=*/false, device), true);
        out.emplace(list.back().first);
        return static_cast<int>(list.size() - 1);
    }
    void giveBack(c10::DeviceIndex device, int slot) {
        std::lock_guard<std::mutex> lock(mutex);
        by_device[device].at(static_cast<size_t>(slot)).second = false;
    }
};

Streams& streams() {
    static Streams* s = new Streams;  // never destroyed: runs may end during exit
    return *s;
}

}  // namespace
#endif

struct RunStream::Impl {
    int slot = -1;
#ifdef AMPBENCH_WITH_CUDA
    c10::DeviceIndex device = 0;
    std::optional<c10::cuda::CUDAStream> stream;
    std::optional<c10::cuda::CUDAStreamGuard> guard;
#endif
};

RunStream::RunStream(c10::Device device) : impl_(std::make_unique<Impl>()) {
#ifdef AMPBENCH_WITH_CUDA
    if (device.is_cuda()) {
        impl_->device = device.has_index() ? device.index() : c10::DeviceIndex(0);
        impl_->slot = streams().lend(impl_->device, impl_->stream);
        impl_->guard.emplace(*impl_->stream);
    }
#else
    (void)device;
#endif
}

RunStream::~RunStream() {
#ifdef AMPBENCH_WITH_CUDA
    if (impl_->slot >= 0) {
        try {
            // The next run lent this stream starts behind nothing of this one's.
            impl_->stream->synchronize();
        } catch (...) {
        }
        impl_->guard.reset();
        streams().giveBack(impl_->device, impl_->slot);
    }
#endif
}

void RunStream::synchronize() const {
#ifdef AMPBENCH_WITH_CUDA
    if (impl_->stream) {
        impl_->stream->synchronize();
    }
#endif
}

int RunStream::slot() const {
    return impl_->slot;
}

}  // namespace ampbench::train
