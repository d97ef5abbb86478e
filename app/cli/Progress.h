#pragma once
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "core/run/TrainObserver.h"

namespace ampbench::cli {

/// Progress of one experiment on stderr: a redrawn bar with ETA on a terminal, a plain
/// line every few seconds otherwise. Each run has its own observer (beginRun), so runs
/// that train side by side each print their own label and count.
class Progress {
  public:
    Progress(int run_count, bool terminal, bool quiet);
    ~Progress();
    /// The observer of run `index` (0-based) of the experiment; owned here. Calls on
    /// one run's observer come from one thread at a time (runs side by side reach the
    /// front end's observers one at a time: train::SpreadRuns).
    run::TrainObserver* beginRun(int index, const std::string& arm, uint64_t seed,
                                 int64_t planned_steps);

  private:
    class Run;
    int run_count_;
    bool terminal_;
    bool quiet_;
    std::vector<std::unique_ptr<Run>> runs_;
};

}  // namespace ampbench::cli
