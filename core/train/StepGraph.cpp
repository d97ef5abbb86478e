#include "core/train/StepGraph.h"

#include <torch/version.h>

#include <stdexcept>

#if defined(AMPBENCH_WITH_CUDA) && TORCH_VERSION_MAJOR >= 2
#define AMPBENCH_GRAPHS 1
#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

namespace ampbench::train {

struct StepGraph::Impl {
#ifdef AMPBENCH_GRAPHS
    std::unique_ptr<at::cuda::CUDAGraph> graph;
#endif
};

StepGraph::StepGraph() : impl_(std::make_unique<Impl>()) {}
StepGraph::~StepGraph() = default;

bool StepGraph::available() {
#ifdef AMPBENCH_GRAPHS
    return true;
#else
    return false;
#endif
}

bool StepGraph::captured() const {
#ifdef AMPBENCH_GRAPHS
    return impl_->graph != nullptr;
#else
    return false;
#endif
}

void StepGraph::capture(const std::function<void()>& body) {
#ifdef AMPBENCH_GRAPHS
    c10::cuda::device_synchronize();
    auto graph = std::make_unique<at::cuda::CUDAGraph>();
    auto side = c10::cuda::getStreamFromPool();
    {
        c10::cuda::CUDAStreamGuard guard(side);
        // Thread-local mode: the prefetcher thread may pin host memory meanwhile.
        graph->capture_begin({0, 0}, cudaStreamCaptureModeThreadLocal);
        try {
            body();
        } catch (...) {
            try {
                graph->capture_end();
            } catch (...) {
            }
            throw;
        }
        graph->capture_end();
    }
    c10::cuda::device_synchronize();
    impl_->graph = std::move(graph);
#else
    (void)body;
    throw std::runtime_error("CUDA-graph capture needs LibTorch 2.x built with CUDA");
#endif
}

void StepGraph::replay() {
#ifdef AMPBENCH_GRAPHS
    impl_->graph->replay();
#endif
}

}  // namespace ampbench::train
