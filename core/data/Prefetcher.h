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
/// Batches come out in the same order for the same seed.
class Prefetcher {
  public:
    Prefetcher(std::shared_ptr<const Dataset> dataset, int64_t batch_size, uint64_t seed, int depth,
               bool pin_memory);
    ~Prefetcher();
    Prefetcher(const Prefetcher&) = delete;
    Prefetcher& operator=(const Prefetcher&) = delete;

    /// Blocks until the next batch is ready; rethrows a failure of the worker.
    Batch next();

  private:
    void work();

    std::shared_ptr<const Dataset> dataset_;
    int64_t batch_size_;
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
