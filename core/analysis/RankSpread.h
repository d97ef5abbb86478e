#pragma once
// Step time across the ranks of a data-parallel run: what rank 0 recorded at the
// end of the run, one Info event per rank ("rank 1: median step 4.40 ms ...", its
// value the median in milliseconds). Pure.
#include <vector>

#include "core/run/Records.h"

namespace ampbench::analysis {

struct RankStepTimes {
    std::vector<int> ranks;         ///< in the order recorded (0 first)
    std::vector<double> median_ms;  ///< each rank's median step time
    double min_ms = 0, max_ms = 0;  ///< over the ranks
    bool empty() const { return ranks.empty(); }
    /// (max - min) / min: how far the slowest rank lags the fastest; 0 when empty.
    double spread() const { return min_ms > 0 ? (max_ms - min_ms) / min_ms : 0.0; }
};

/// The ranks' median step times from a run's events; empty for a run of one rank.
RankStepTimes rankStepTimes(const std::vector<run::EventRecord>& events);

}  // namespace ampbench::analysis
