#include "core/train/private/StepGraph.h"

#include "core/train/private/CaptureGate.h"

#include <torch/version.h>

#include <optional>
#include <stdexcept>

#if defined(AMPBENCH_WITH_CUDA) && TORCH_VERSION_MAJOR >= 2
#define AMPBENCH_GRAPHS 1
#include <ATen/Functions.h>
#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

namespace ampbench::train {

#ifdef AMPBENCH_GRAPHS
namespace {

CaptureGate& gate() {
    static CaptureGate* g = new CaptureGate;  // never destroyed: runs may end during exit
    return *g;
}

thread_local int t_uses = 0;  // this thread's SharedUse depth

/// For the capture: this thread's hold is given up, and taken again after it.
class Exclusive {
  public:
    Exclusive() : held_(t_uses) {
        if (held_ > 0) {
            gate().leave();
        }
        t_uses = 0;
        gate().beginCapture();
    }
    ~Exclusive() {
        gate().endCapture();
        t_uses = held_;
        if (held_ > 0) {
            gate().enter();
        }
    }

  private:
    int held_;
};

/// LibTorch takes the default CUDA generator out of capture mode only after CUDA has
/// ended a capture without error; a capture CUDA refused (a host sync in the step, an
/// operation graphs cannot hold) leaves it there, and every later random operation of
/// the process (dropout, a CUDA randn) then fails with "Offset increment outside graph
/// capture". A capture of one small operation, ended properly, takes it out again.
void endGeneratorCapture() {
    try {
        at::Tensor t = at::zeros(
            {1}, at::TensorOptions().device(c10::Device(c10::kCUDA, c10::cuda::current_device())));
        c10::cuda::getCurrentCUDAStream().synchronize();
        at::cuda::CUDAGraph repair;
        repair.capture_begin({0, 0}, cudaStreamCaptureModeThreadLocal);
        t.add_(1);
        repair.capture_end();
        c10::cuda::getCurrentCUDAStream().synchronize();
    } catch (...) {
        // Nothing more can be done here; the run goes on eagerly and says why.
    }
}

/// Ends a capture whose body threw: where CUDA refuses to end it, the generator is
/// taken out of capture mode as above.
void endRefusedCapture(std::unique_ptr<at::cuda::CUDAGraph> graph) {
    try {
        graph->capture_end();
        return;
    } catch (...) {
    }
    graph.reset();
    endGeneratorCapture();
}

/// The stream of graphs made where the current stream is the default one (which
/// cannot capture): one for the process (see the class comment).
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
    const c10::cuda::CUDAStream current = c10::cuda::getCurrentCUDAStream();
    if (current == c10::cuda::getDefaultCUDAStream()) {
        // Work queued on the default stream (the model's weights, data on the
        // device) must be done before the capture stream uses it.
        current.synchronize();
        impl_->on_stream.emplace(captureStream());
    }
#endif
}

StepGraph::~StepGraph() {
#ifdef AMPBENCH_GRAPHS
    try {
        // The replays queued are done before the graph and its memory go.
        c10::cuda::getCurrentCUDAStream().synchronize();
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

void StepGraph::releasePools() {
#ifdef AMPBENCH_GRAPHS
    c10::cuda::CUDACachingAllocator::emptyCache();
#endif
}

bool StepGraph::captured() const {
#ifdef AMPBENCH_GRAPHS
    return impl_->graph != nullptr;
#else
    return false;
#endif
}

StepGraph::SharedUse::SharedUse() {
#ifdef AMPBENCH_GRAPHS
    if (t_uses++ == 0) {
        gate().enter();
    }
#endif
}

StepGraph::SharedUse::~SharedUse() {
#ifdef AMPBENCH_GRAPHS
    if (--t_uses == 0) {
        gate().leave();
    }
#endif
}

void StepGraph::betweenSteps() {
#ifdef AMPBENCH_GRAPHS
    if (t_uses > 0 && gate().captureWaits()) {
        gate().leave();
        gate().enter();  // after the capture
    }
#endif
}

void StepGraph::capture(const std::function<void()>& body) {
#ifdef AMPBENCH_GRAPHS
    const Exclusive alone;  // no other run of the process touches the GPU meanwhile
    // The work queued on this stream before the capture is done first.
    c10::cuda::getCurrentCUDAStream().synchronize();
    auto graph = std::make_unique<at::cuda::CUDAGraph>();
    // Thread-local mode: the prefetcher thread may pin host memory meanwhile.
    graph->capture_begin({0, 0}, cudaStreamCaptureModeThreadLocal);
    try {
        body();
    } catch (...) {
        endRefusedCapture(std::move(graph));
        throw;
    }
    try {
        graph->capture_end();
    } catch (...) {
        graph.reset();
        endGeneratorCapture();
        throw;
    }
    c10::cuda::getCurrentCUDAStream().synchronize();
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
