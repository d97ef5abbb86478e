#pragma once
// Private to train/: who may use the GPU while a CUDA graph is captured (StepGraph).
#include <atomic>
#include <condition_variable>
#include <mutex>

namespace ampbench::train {

/// Readers are runs using the GPU, the writer a capture. A waiting capture keeps
/// new readers out, so runs stepping without pause cannot starve it.
/// Plain C++, so it is tested on any machine.
class CaptureGate {
  public:
    void enter() {
        std::unique_lock<std::mutex> lock(mutex_);
        changed_.wait(lock, [&] { return !writer_ && waiting_.load() == 0; });
        ++readers_;
    }
    void leave() {
        std::lock_guard<std::mutex> lock(mutex_);
        if (--readers_ == 0) {
            changed_.notify_all();
        }
    }
    bool captureWaits() const { return waiting_.load() > 0; }
    void beginCapture() {
        std::unique_lock<std::mutex> lock(mutex_);
        ++waiting_;
        changed_.wait(lock, [&] { return !writer_ && readers_ == 0; });
        --waiting_;
        writer_ = true;
    }
    void endCapture() {
        std::lock_guard<std::mutex> lock(mutex_);
        writer_ = false;
        changed_.notify_all();
    }

  private:
    std::mutex mutex_;
    std::condition_variable changed_;
    int readers_ = 0;
    bool writer_ = false;
    std::atomic<int> waiting_{0};
};

}  // namespace ampbench::train
