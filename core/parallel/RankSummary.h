#pragma once
// What a rank other than 0 reports of itself at the end of a run: rank 0 records
// it as an event of the run, so every rank's memory peak and step time is kept
// without a schema change. No LibTorch here.
#include <cstdint>
#include <string>
#include <vector>

#include "core/run/TrainObserver.h"

namespace ampbench::parallel {

struct RankSummary {
    int rank = 0;
    int64_t steps = 0;
    double median_step_ms = 0;  ///< over the timed (post-warm-up) steps; NaN when none
    double max_step_ms = 0;
    int64_t peak_bytes = 0;  ///< the rank's own peak (CUDA allocator, or resident set on CPU)
    double data_wait_ms = 0;
};

std::string toJson(const RankSummary& s);
/// Never throws: what cannot be read keeps its default.
RankSummary rankSummaryFromJson(const std::string& text);
/// "rank 1: median step 4.20 ms (max 6.10), peak 310 MiB, 120 steps"
std::string describe(const RankSummary& s);

/// Builds a rank's summary from the steps it trained: the observer of a rank that
/// does not record.
class RankSummaryObserver : public run::TrainObserver {
  public:
    explicit RankSummaryObserver(int rank) { summary_.rank = rank; }
    void onStep(const run::StepRecord& s) override;
    void onFinish(const run::RunOutcome& o) override { outcome_ = o; }
    RankSummary summary() const;
    const run::RunOutcome& outcome() const { return outcome_; }

  private:
    RankSummary summary_;
    std::vector<double> step_ms_;
    run::RunOutcome outcome_;
};

}  // namespace ampbench::parallel
