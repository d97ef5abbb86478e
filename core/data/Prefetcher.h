#pragma once
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>

#include "core/data/Datasets.h"

namespace ampbench::data {

/// Prepares training batches on a background thread: draws indices from a
/// seeded permutation (reshuffled each epoch), gathers the samples and, for a
/// CUDA run, pins them so the trainer's copy to the device is asynchronous.
/// Batches come out in the same order for the same seed. A data-parallel rank
/// (`rank` of `world`) draws the global batch of batch_size × world from the same
/// seeded order and keeps samples rank, rank + world, ...: 2 ranks of batch b see
/// exactly the samples 1 rank of batch 2b sees. The thread does its ATen work on one
/// CPU thread, as PyTorch's DataLoader workers do.
class Prefetcher {
  public:
    Prefetcher(std::shared_ptr<const Dataset> dataset, int64_t batch_size, uint64_t seed, int depth,
               bool pin_memory, int rank = 0, int world = 1);
    ~Prefetcher();
    Prefetcher(const Prefetcher&) = delete;
    Prefetcher& operator=(const Prefetcher&) = delete;

    /// Blocks until the next batch is ready; rethrows a failure of the worker.
    Batch next();

  private:
    void work();

    std::shared_ptr<const Dataset> dataset_;
    int64_t batch_size_;
    int rank_, world_;
    uint64_t seed_;
    size_t depth_;
    bool pin_;
    std::mutex mutex_;  // guards queue_, error_, stop_
    std::condition_variable cv_;
    std::deque<Batch> queue_;
    std::exception_ptr error_;
    bool stop_ = false;
    std::thread thread_;
};

}  // namespace ampbench::data
