#pragma once
#include <chrono>
#include <cstdio>
#include <string>

#include "core/run/TrainObserver.h"

namespace ampbench::cli {

/// Progress of one experiment on stderr: a redrawn bar with ETA on a terminal,
/// a plain line every few seconds otherwise. Lives on the training thread.
class Progress : public run::TrainObserver {
  public:
    Progress(int run_count, bool terminal, bool quiet);
    void beginRun(int index, const std::string& arm, uint64_t seed, int64_t planned_steps);
    void onStep(const run::StepRecord& step) override;
    void onEval(const run::EvalRecord& eval) override;
    void onEvent(const run::EventRecord& event) override;
    void onFinish(const run::RunOutcome& outcome) override;

  private:
    void draw(bool force);

    int run_count_;
    bool terminal_;
    bool quiet_;
    int index_ = 0;
    std::string arm_;
    uint64_t seed_ = 0;
    int64_t planned_ = 0;
    int64_t step_ = 0;
    double loss_ = 0;
    double last_acc_ = -1;
    std::chrono::steady_clock::time_point run_start_, last_draw_;
};

}  // namespace ampbench::cli
