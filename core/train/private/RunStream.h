#pragma once
#include <c10/core/Device.h>

#include <memory>

namespace ampbench::train {

/// The CUDA stream a run trains on, current on the constructing thread from
/// construction to destruction (destroy it on that thread). Runs training side by
/// side in one process each hold a stream of their own, so their work overlaps on
/// the GPU instead of queueing behind each other on one stream. A stream is given
/// back when its run ends and the next run takes the lowest free one: runs one
/// after another all train on the same stream, which matters because LibTorch keeps
/// a cuBLAS workspace per stream for the life of the process (a new stream per run
/// left one behind each run, counted in the next run's memory). Nothing on the CPU.
class RunStream {
  public:
    explicit RunStream(c10::Device device);
    ~RunStream();
    RunStream(const RunStream&) = delete;
    RunStream& operator=(const RunStream&) = delete;
    /// Waits for the work queued on this run's stream (no other run's).
    void synchronize() const;
    /// Which of the device's run streams this is (0 for a run alone), -1 on the CPU.
    int slot() const;

  private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace ampbench::train
