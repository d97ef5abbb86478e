#pragma once
// What both benchmark programs use to compare a recorded run with a bare one.
#include <cstdint>
#include <limits>

#include "core/train/Trainer.h"

namespace ampbench::bench {

/// Forwards to `inner` (when given) and keeps the run's own step clock (wall_s of
/// each step) at step `skip` and at the last step: the steady-state wall time per
/// optimizer step, without set-up, the final evaluation or closing the run.
struct SteadyClock : run::TrainObserver {
    SteadyClock(run::TrainObserver* inner, int64_t skip) : inner_(inner), skip_(skip) {}
    void onStart(const run::RunInfo& i) override {
        if (inner_) {
            inner_->onStart(i);
        }
    }
    void onStep(const run::StepRecord& s) override {
        if (inner_) {
            inner_->onStep(s);
        }
        if (s.step == skip_) {
            first_s = s.wall_s;
        }
        last_s = s.wall_s;
        last_step = s.step;
    }
    void onEval(const run::EvalRecord& e) override {
        if (inner_) {
            inner_->onEval(e);
        }
    }
    void onEvent(const run::EventRecord& e) override {
        if (inner_) {
            inner_->onEvent(e);
        }
    }
    void onFinish(const run::RunOutcome& o) override {
        if (inner_) {
            inner_->onFinish(o);
        }
    }
    bool measured() const { return last_step > skip_; }
    /// Wall milliseconds per optimizer step after step `skip`.
    double msPerStep() const {
        return (last_s - first_s) * 1000.0 / static_cast<double>(last_step - skip_);
    }

    run::TrainObserver* inner_;
    int64_t skip_;
    double first_s = 0, last_s = 0;
    int64_t last_step = 0;
};

/// The bare run of an A/B: no timers, memory probe or gradient norm, and nothing
/// read back from the device before the end of the run.
inline train::TrainOptions bareOptions() {
    train::TrainOptions o;
    o.instrument = false;
    o.flush_every = std::numeric_limits<int>::max();
    return o;
}

}  // namespace ampbench::bench
