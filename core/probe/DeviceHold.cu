#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "core/probe/DeviceHoldCuda.h"

namespace ampbench::probe::cuda {
namespace {

__device__ unsigned long long globalNanoseconds() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__global__ void holdKernel(const volatile int* release, volatile int* expired,
                           unsigned long long timeout_ns) {
    const unsigned long long start = globalNanoseconds();
    int timed_out = 0;
    while (*release == 0) {
        if (globalNanoseconds() - start > timeout_ns) {
            timed_out = 1;
            break;
        }
        __nanosleep(500);
    }
    *expired = timed_out;
    __threadfence_system();
}

}  // namespace

void queueHold(const volatile int* release, volatile int* expired, int64_t timeout_ns,
               void* stream) {
    holdKernel<<<1, 1, 0, static_cast<cudaStream_t>(stream)>>>(
        release, expired, static_cast<unsigned long long>(timeout_ns));
    if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess) {
        throw std::runtime_error(std::string("queueing the device hold: ") + cudaGetErrorString(e));
    }
}

}  // namespace ampbench::probe::cuda
