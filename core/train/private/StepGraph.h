#pragma once
#include <functional>
#include <memory>

namespace ampbench::train {

/// A whole training step captured once as a CUDA graph and replayed: one launch
/// per step instead of one per operation, which removes the host's per-op cost
/// from small models. The captured body must only use tensors that live across
/// replays (static inputs, parameters, optimizer and scaler state) and must not
/// synchronise with the host. Available with LibTorch 2.x built with CUDA.
///
/// The graph is captured and replayed on the constructing thread's current stream:
/// a run's own stream (RunStream), so graphs of runs side by side capture and replay
/// at once. Where the current stream is the default one, which cannot capture, the
/// graph switches the thread to one side stream that every such graph of the process
/// shares, from construction to destruction (LibTorch keeps a cuBLAS workspace per
/// stream for the life of the process: one stream makes it once, outside the graph's
/// private memory pool).
class StepGraph {
  public:
    /// Held by a run for as long as it uses the GPU (re-entrant on a thread). A
    /// capture waits until no other run of the process holds it, and runs wait for a
    /// capture to end: another thread's set-up (cuBLAS and cuDNN handles, allocations)
    /// or eager work during a capture invalidated it, or was refused itself, when
    /// graph runs trained side by side. Nothing without graphs in the build.
    class SharedUse {
      public:
        SharedUse();
        ~SharedUse();
        SharedUse(const SharedUse&) = delete;
        SharedUse& operator=(const SharedUse&) = delete;
    };
    /// Between two steps of a run holding SharedUse: lets a waiting capture in.
    static void betweenSteps();

    /// Keeps the current stream, or switches to the shared side stream (see above).
    StepGraph();
    /// Waits for the stream's replays and switches back where it switched.
    ~StepGraph();
    static bool available();
    /// Gives the device the memory of graphs destroyed since, and every other block
    /// the caching allocator holds unused: a destroyed graph's private pool is
    /// otherwise kept reserved for the life of the process.
    static void releasePools();
    /// Captures `body` on the current stream (that stream is synchronised around it).
    /// Throws std::runtime_error with CUDA's reason when capture fails.
    void capture(const std::function<void()>& body);
    /// Launches the captured step on the current stream.
    void replay();
    bool captured() const;

  private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace ampbench::train
