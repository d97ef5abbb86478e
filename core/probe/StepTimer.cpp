#include "core/probe/StepTimer.h"

#include <stdexcept>

#ifdef AMPBENCH_WITH_CUDA
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>
#endif

namespace ampbench::probe {

struct StepTimer::Impl {
    bool cuda = false;
    std::chrono::steady_clock::time_point t0;
    std::vector<double> done;
#ifdef AMPBENCH_WITH_CUDA
    // Plain CUDA runtime events, recorded on the current stream: a record is one
    // runtime call (ATen's CUDAEvent adds a device guard and checks to each, which
    // a millisecond step on a launch-bound model notices).
    struct Step {
        cudaEvent_t start = nullptr, stop = nullptr;
        bool owns_start = false;  // false: start is the previous step's stop
    };
    std::vector<Step> pending;
    std::vector<cudaEvent_t> spare;  // reused events: creating one costs a driver call
    Step current;
    cudaEvent_t chain = nullptr;   // the last step's stop, when the next step may start at it
    cudaEvent_t marker = nullptr;  // see mark()
    cudaEvent_t take() {
        if (!spare.empty()) {
            cudaEvent_t e = spare.back();
            spare.pop_back();
            return e;
        }
        cudaEvent_t e = nullptr;
        C10_CUDA_CHECK(cudaEventCreate(&e));
        return e;
    }
    void release(Step& s) {
        if (s.owns_start) {
            spare.push_back(s.start);
        }
        if (s.stop) {
            spare.push_back(s.stop);
        }
        s = {};
    }
    static void record(cudaEvent_t e) {
        C10_CUDA_CHECK(cudaEventRecord(e, c10::cuda::getCurrentCUDAStream()));
    }
    ~Impl() {
        release(current);
        for (auto& s : pending) {
            release(s);
        }
        for (auto e : spare) {
            cudaEventDestroy(e);  // no throw from a destructor
        }
        if (marker) {
            cudaEventDestroy(marker);
        }
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
        auto& d = *impl_;
        if (d.chain) {
            d.current = {d.chain, nullptr, false};
        } else {
            d.current = {d.take(), nullptr, true};
            Impl::record(d.current.start);
        }
        return;
    }
#endif
    impl_->t0 = std::chrono::steady_clock::now();
}

void StepTimer::stop() {
#ifdef AMPBENCH_WITH_CUDA
    if (impl_->cuda) {
        auto& d = *impl_;
        d.current.stop = d.take();
        Impl::record(d.current.stop);
        d.pending.push_back(d.current);
        d.chain = d.current.stop;
        d.current = {};
        return;
    }
#endif
    auto dt = std::chrono::steady_clock::now() - impl_->t0;
    impl_->done.push_back(std::chrono::duration<double, std::milli>(dt).count());
}

void StepTimer::discard() {
#ifdef AMPBENCH_WITH_CUDA
    if (impl_->cuda) {
        impl_->release(impl_->current);
        impl_->chain = nullptr;
    }
#endif
}

void StepTimer::breakChain() {
#ifdef AMPBENCH_WITH_CUDA
    impl_->chain = nullptr;
#endif
}

void StepTimer::mark() {
#ifdef AMPBENCH_WITH_CUDA
    if (impl_->cuda) {
        if (!impl_->marker) {
            C10_CUDA_CHECK(cudaEventCreateWithFlags(&impl_->marker, cudaEventDisableTiming));
        }
        Impl::record(impl_->marker);
    }
#endif
}

bool StepTimer::markerReached() {
#ifdef AMPBENCH_WITH_CUDA
    if (impl_->cuda && impl_->marker) {
        const cudaError_t e = cudaEventQuery(impl_->marker);
        if (e == cudaErrorNotReady) {
            (void)cudaGetLastError();  // not an error: clear it
            return false;
        }
        C10_CUDA_CHECK(e);
    }
#endif
    return true;
}

std::vector<double> StepTimer::collect() {
#ifdef AMPBENCH_WITH_CUDA
    if (impl_->cuda) {
        auto& d = *impl_;
        std::vector<double> out;
        out.reserve(d.pending.size());
        for (auto& s : d.pending) {
            C10_CUDA_CHECK(cudaEventSynchronize(s.stop));
            float ms = 0;
            C10_CUDA_CHECK(cudaEventElapsedTime(&ms, s.start, s.stop));
            out.push_back(ms);
        }
        // Every event read here goes back to the pool, so the next step starts anew.
        for (auto& s : d.pending) {
            d.release(s);
        }
        d.pending.clear();
        d.chain = nullptr;
        return out;
    }
#endif
    std::vector<double> out;
    out.swap(impl_->done);
    return out;
}

}  // namespace ampbench::probe
