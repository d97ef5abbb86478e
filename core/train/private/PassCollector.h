#pragma once
// Private to train/: what a pass of the fast verdict hears of its run (FastVerdict.cpp,
// SharingPasses.cpp): the timed steps, the memory, the device time, the end.
#include <algorithm>
#include <cmath>

#include "core/run/AloneTiming.h"
#include "core/run/TrainObserver.h"
#include "core/train/private/RunLoop.h"

namespace ampbench::train {

/// What one pass recorded: its timed steps, its memory, its device time, its end.
class PassCollector : public run::TrainObserver {
  public:
    explicit PassCollector(run::AloneTiming& t) : t_(t) {}
    void onStep(const run::StepRecord& s) override {
        if (s.timed && s.step_ms > 0) {
            t_.step_ms.push_back(s.step_ms);
            t_.step_samples.push_back(s.samples - samples_);
        }
        samples_ = s.samples;
        t_.peak_allocated = std::max(t_.peak_allocated, s.mem_peak);
        t_.peak_reserved = std::max(t_.peak_reserved, s.mem_reserved);
    }
    void onEvent(const run::EventRecord& e) override {
        if (e.kind == run::EventKind::DeviceBusy && std::isfinite(e.value) && e.value > 0) {
            t_.device_ms = e.value;
        }
        if (e.kind == run::EventKind::Warning && e.message.rfind(kCaptureFallback, 0) == 0) {
            fell_back_ = true;
        }
    }
    void onFinish(const run::RunOutcome& o) override { outcome_ = o; }
    bool fellBack() const { return fell_back_; }
    const run::RunOutcome& outcome() const { return outcome_; }

  private:
    run::AloneTiming& t_;
    int64_t samples_ = 0;
    bool fell_back_ = false;
    run::RunOutcome outcome_;
};

}  // namespace ampbench::train
