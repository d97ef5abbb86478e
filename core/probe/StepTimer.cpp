#include "core/probe/StepTimer.h"

#include <stdexcept>

#ifdef AMPBENCH_WITH_CUDA
#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDAStream.h>
#endif

namespace ampbench::probe {

struct StepTimer::Impl {
    bool cuda = false;
    std::chrono::steady_clock::time_point t0;
    std::vector<double> done;
#ifdef AMPBENCH_WITH_CUDA
    struct Pair {
        std::unique_ptr<at::cuda::CUDAEvent> start, stop;
    };
    std::vector<Pair> pending;
    std::vector<Pair> spare;  // reused events: creating one costs a driver call
    Pair current;
    Pair take() {
        if (!spare.empty()) {
            Pair p = std::move(spare.back());
            spare.pop_back();
            return p;
        }
        return {std::make_unique<at::cuda::CUDAEvent>(cudaEventDefault),
                std::make_unique<at::cuda::CUDAEvent>(cudaEventDefault)};
    }
#endif
};

StepTimer::StepTimer(c10::Device device) : impl_(std::make_unique<Impl>()) {
    impl_->cuda = device.is_cuda();
#ifndef AMPBENCH_WITH_CUDA
    if (impl_->cuda) {
        throw std::runtime_error("this build of ampbench has no CUDA support");
    }
#endif
}

StepTimer::~StepTimer() = default;

bool StepTimer::usesDeviceEvents() const {
    return impl_->cuda;
}

void StepTimer::start() {
#ifdef AMPBENCH_WITH_CUDA
    if (impl_->cuda) {
        impl_->current = impl_->take();
        impl_->current.start->record();
        return;
    }
#endif
    impl_->t0 = std::chrono::steady_clock::now();
}

void StepTimer::stop() {
#ifdef AMPBENCH_WITH_CUDA
    if (impl_->cuda) {
        impl_->current.stop->record();
        impl_->pending.push_back(std::move(impl_->current));
        return;
    }
#endif
    auto dt = std::chrono::steady_clock::now() - impl_->t0;
    impl_->done.push_back(std::chrono::duration<double, std::milli>(dt).count());
}

void StepTimer::discard() {
#ifdef AMPBENCH_WITH_CUDA
    if (impl_->cuda && impl_->current.start) {
        impl_->spare.push_back(std::move(impl_->current));
    }
#endif
}

std::vector<double> StepTimer::collect() {
#ifdef AMPBENCH_WITH_CUDA
    if (impl_->cuda) {
        std::vector<double> out;
        out.reserve(impl_->pending.size());
        for (auto& p : impl_->pending) {
            p.stop->synchronize();
            out.push_back(p.start->elapsed_time(*p.stop));
            impl_->spare.push_back(std::move(p));
        }
        impl_->pending.clear();
        return out;
    }
#endif
    std::vector<double> out;
    out.swap(impl_->done);
    return out;
}

}  // namespace ampbench::probe
