#include "core/train/private/StepGraph.h"

#include <torch/version.h>

#include <optional>
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

#ifdef AMPBENCH_GRAPHS
namespace {
/// The process's one capture stream (see the class comment).
c10::cuda::CUDAStream captureStream() {
    static const c10::cuda::CUDAStream stream = c10::cuda::getStreamFromPool();
    return stream;
}
}  // namespace
#endif

struct StepGraph::Impl {
#ifdef AMPBENCH_GRAPHS
    std::unique_ptr<at::cuda::CUDAGraph> graph;
    std::optional<c10::cuda::CUDAStreamGuard> on_stream;
#endif
};

StepGraph::StepGraph() : impl_(std::make_unique<Impl>()) {
#ifdef AMPBENCH_GRAPHS
    // Work queued on the previous stream (the model's weights, data on the device)
    // must be done before the capture stream uses it.
    c10::cuda::device_synchronize();
    impl_->on_stream.emplace(captureStream());
#endif
}

StepGraph::~StepGraph() {
#ifdef AMPBENCH_GRAPHS
    try {
        // Tensors freed after this return to pools the other stream may reuse.
        c10::cuda::device_synchronize();
    } catch (...) {
    }
    impl_->graph.reset();
    impl_->on_stream.reset();
#endif
}

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
