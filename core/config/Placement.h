#pragma once
// Where a run trains, as a type: the kind of device and, on CUDA, the GPU it starts on
// and how many it takes. Planning resolves it once (train::resolvePlacement); below
// planning it is handed down, never worked out again from a device string. Stored and
// shown as LibTorch names devices ("cpu", "cuda:1"); parse() reads those back.
#include <string>

namespace ampbench::config {

struct Placement {
    enum class Kind { Cpu, Cuda };
    Kind kind = Kind::Cpu;
    int gpu = 0;   ///< CUDA: the first GPU the run trains on
    int gpus = 1;  ///< CUDA: the GPUs it takes (a data-parallel arm's ranks)

    static Placement cpu() { return {}; }
    static Placement cuda(int gpu = 0, int gpus = 1) { return {Kind::Cuda, gpu, gpus}; }
    /// Reads "cpu", "cuda" or "cuda:N", as runs record their device; whatever else
    /// (a name of a newer build, an empty field of an old row) reads as the CPU.
    static Placement parse(const std::string& device);

    bool isCuda() const { return kind == Kind::Cuda; }
    /// "cpu" or "cuda:N" (the first GPU).
    std::string str() const;
    /// The same placement starting on another GPU (runs spread over the machine's GPUs).
    Placement onGpu(int first_gpu) const;
    bool operator==(const Placement& o) const {
        return kind == o.kind && (kind == Kind::Cpu || (gpu == o.gpu && gpus == o.gpus));
    }
    bool operator!=(const Placement& o) const { return !(*this == o); }
};

/// Whether a device as runs record it ("cuda:0") is a CUDA device.
inline bool onCuda(const std::string& device) {
    return Placement::parse(device).isCuda();
}

}  // namespace ampbench::config
