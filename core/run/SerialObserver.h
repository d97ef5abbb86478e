#pragma once
// An observer heard by runs that train at once, one call at a time: a front end's
// progress display, or recorders sharing one database connection, is written for one
// caller at a time.
#include <mutex>
#include <vector>

#include "core/run/TrainObserver.h"

namespace ampbench::run {

class SerialObserver : public TrainObserver {
  public:
    /// Calls `target` holding `mutex` (shared by every SerialObserver of the runs at
    /// once); a null mutex passes the calls straight on.
    SerialObserver(TrainObserver& target, std::mutex* mutex) : target_(target), mutex_(mutex) {}
    void onStart(const RunInfo& i) override {
        locked([&] { target_.onStart(i); });
    }
    void onStep(const StepRecord& s) override {
        locked([&] { target_.onStep(s); });
    }
    void onEval(const EvalRecord& e) override {
        locked([&] { target_.onEval(e); });
    }
    void onEvent(const EventRecord& e) override {
        locked([&] { target_.onEvent(e); });
    }
    void onNumerics(const std::vector<NumericsRecord>& rows) override {
        locked([&] { target_.onNumerics(rows); });
    }
    void onFinish(const RunOutcome& o) override {
        locked([&] { target_.onFinish(o); });
    }
    bool onIdle() override {
        bool holding = false;
        locked([&] { holding = target_.onIdle(); });
        return holding;
    }

  private:
    template <class F>
    void locked(F f) {
        if (!mutex_) {
            f();
            return;
        }
        std::lock_guard<std::mutex> lock(*mutex_);
        f();
    }
    TrainObserver& target_;
    std::mutex* mutex_;
};

}  // namespace ampbench::run
