#include "core/probe/HostReadback.h"

#include <ATen/ATen.h>

#ifdef AMPBENCH_WITH_CUDA
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>
#endif

namespace ampbench::probe {

struct HostReadback::Impl {
    at::Tensor host;  // double, contiguous, on the CPU (pinned for a device copy)
    bool pending = false;
#ifdef AMPBENCH_WITH_CUDA
    cudaEvent_t done = nullptr;  // recorded after the copy
    bool on_device = false;
    ~Impl() {
        if (done) {
            cudaEventDestroy(done);  // no throw from a destructor
        }
    }
#endif
};

HostReadback::HostReadback() : impl_(std::make_unique<Impl>()) {}

HostReadback::~HostReadback() = default;

void HostReadback::post(const at::Tensor& values) {
    const at::Tensor flat = values.detach().reshape({-1}).to(at::kDouble);
    impl_->pending = true;
#ifdef AMPBENCH_WITH_CUDA
    impl_->on_device = flat.is_cuda();
    if (impl_->on_device) {
        if (!impl_->host.defined() || impl_->host.numel() != flat.numel()) {
            impl_->host = at::empty({flat.numel()},
                                    at::TensorOptions().dtype(at::kDouble).pinned_memory(true));
        }
        impl_->host.copy_(flat, /*non_blocking=*/true);
        if (!impl_->done) {
            C10_CUDA_CHECK(cudaEventCreateWithFlags(&impl_->done, cudaEventDisableTiming));
        }
        C10_CUDA_CHECK(cudaEventRecord(impl_->done, c10::cuda::getCurrentCUDAStream()));
        return;
    }
#endif
    impl_->host = flat.to(at::kCPU).contiguous().clone();
}

bool HostReadback::pending() const {
    return impl_->pending;
}

void HostReadback::wait() const {
#ifdef AMPBENCH_WITH_CUDA
    if (impl_->pending && impl_->on_device) {
        C10_CUDA_CHECK(cudaEventSynchronize(impl_->done));
    }
#endif
}

std::vector<double> HostReadback::take() {
    if (!impl_->pending) {
        return {};
    }
    wait();
    impl_->pending = false;
    const double* d = impl_->host.data_ptr<double>();
    return {d, d + impl_->host.numel()};
}

}  // namespace ampbench::probe
