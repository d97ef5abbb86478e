#include "core/data/Prefetcher.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>
#include <c10/util/ThreadLocalDebugInfo.h>

#ifdef __linux__
#include <pthread.h>
#endif

namespace ampbench::data {

Prefetcher::Prefetcher(std::shared_ptr<const Dataset> dataset, int64_t batch_size, uint64_t seed,
                       int depth, bool pin_memory, int rank, int world)
    : dataset_(std::move(dataset)),
      batch_size_(batch_size),
      rank_(rank),
      world_(std::max(1, world)),
      seed_(seed),
      depth_(static_cast<size_t>(std::max(1, depth))),
      pin_(pin_memory) {
    // The thread carries on the LibTorch debug information of the thread that made it,
    // as LibTorch's own asynchronous tasks do: the run's tensor account (a CPU run's
    // memory, probe::CpuTensorAccount) counts the batches prepared here, and their
    // frees on the training thread balance it.
    thread_ = std::thread([this, info = c10::ThreadLocalDebugInfo::current()] {
        c10::DebugInfoGuard carried(info);
        work();
    });
}

Prefetcher::~Prefetcher() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
}

Batch Prefetcher::next() {
    std::unique_lock<std::mutex> lock(mutex_);
    cv_.wait(lock, [this] { return !queue_.empty() || error_; });
    if (queue_.empty() && error_) {
        std::rethrow_exception(error_);
    }
    Batch b = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    cv_.notify_all();
    return b;
}

void Prefetcher::work() {
#ifdef __linux__
    pthread_setname_np(pthread_self(), "ampbench-data");  // in top -H, gdb, a profiler
#endif
    // One thread for this thread's ATen work. Each OpenMP parallel region ATen opens
    // starts a team of as many threads as the intra-op count, however small the work:
    // nine runs packed on a GPU, each with its loader gathering and pinning batches on
    // every CPU, kept well over a hundred threads spinning against the runs' own. The
    // global count this also sets is what threads that never set their own start
    // with; each run sets its own (applyCpuThreads) as it starts.
    at::set_num_threads(1);
    try {
        auto gen = at::detail::createCPUGenerator(seed_);
        const int64_t n = dataset_->trainSize();
        at::Tensor perm;
        int64_t pos = n;                              // forces a shuffle first
        const int64_t global = batch_size_ * world_;  // the batch all ranks draw together
        while (true) {
            at::Tensor idx;
            if (global <= n) {
                if (pos + global > n) {  // drop the epoch's last partial batch
                    perm = at::randperm(n, gen, at::TensorOptions().dtype(at::kLong));
                    pos = 0;
                }
                idx = perm.slice(0, pos, pos + global);
                pos += global;
            } else {  // a batch larger than the data: sample with replacement
                idx = at::randint(n, {global}, gen, at::TensorOptions().dtype(at::kLong));
            }
            if (world_ > 1) {
                idx = idx.slice(0, rank_, global, world_).contiguous();  // this rank's shard
            }
            Batch b = dataset_->trainBatch(idx);
            if (pin_) {
                b.input = b.input.pin_memory();
                b.target = b.target.pin_memory();
            }
            std::unique_lock<std::mutex> lock(mutex_);
            cv_.wait(lock, [this] { return stop_ || queue_.size() < depth_; });
            if (stop_) {
                return;
            }
            queue_.push_back(std::move(b));
            lock.unlock();
            cv_.notify_all();
        }
    } catch (...) {
        std::lock_guard<std::mutex> lock(mutex_);
        error_ = std::current_exception();
        cv_.notify_all();
    }
}

}  // namespace ampbench::data
