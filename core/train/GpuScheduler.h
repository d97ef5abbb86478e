#pragma once
// Which GPUs an experiment's next run trains on when its runs are spread over the
// machine. Pure bookkeeping (no LibTorch, no threads): the caller asks for a place
// for each run in plan order and returns it when the run ends.
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

namespace ampbench::train {

class GpuScheduler {
  public:
    /// `gpus` GPUs (at least 1), each holding at most `runs_per_gpu` runs at once.
    GpuScheduler(int gpus, int runs_per_gpu);

    /// The first of `ranks` consecutive GPUs that each have a free slot, taken for
    /// run `run` (lowest GPU first, the emptiest block preferred); nullopt when no
    /// such block is free now. A run of more ranks than GPUs never fits.
    std::optional<int> place(int64_t run, int ranks);
    /// Frees the run's GPUs.
    void finish(int64_t run);
    /// Whether another run held one of `run`'s GPUs at any time while it trained
    /// (its step times are not the GPU's alone).
    bool shared(int64_t run) const;
    /// Runs on GPU `gpu` now.
    int load(int gpu) const { return load_.at(static_cast<size_t>(gpu)); }
    int gpus() const { return static_cast<int>(load_.size()); }
    bool idle() const { return active_.empty(); }

  private:
    struct Active {
        int first = 0;
        int ranks = 1;
        bool shared = false;
    };
    int per_gpu_;
    std::vector<int> load_;
    std::map<int64_t, Active> active_;
    std::map<int64_t, bool> ended_shared_;
};

}  // namespace ampbench::train
