#pragma once
// The max-batch finder's results of one experiment as the GUI's chart and table
// show them: the newest search per arm, each with its ratio to the baseline
// (the fp32 arm without checkpointing, as the practitioners' "AMP doubles the
// batch" claim is stated against it). Pure; unit-tested.
#include <cstdint>
#include <string>
#include <vector>

#include "core/store/Rows.h"

namespace ampbench::analysis {

struct CapacityBar {
    std::string arm;
    std::string precision;  ///< resolved ("fp16", not "amp")
    bool checkpointing = false;
    int64_t max_batch = 0;  ///< 0: nothing fit (or the search has found none yet)
    int64_t safe_batch = 0;
    int64_t first_failure = 0;
    int64_t peak_at_max = 0;
    double ratio = 0.0;  ///< max_batch ÷ the baseline's; NaN when either is 0
    int trials = 0;
    std::string status;  ///< running | finished | cancelled | failed
    std::string note;
    int64_t search_id = 0;
};

struct CapacityChart {
    std::string baseline;  ///< arm the ratios are against; empty when no search
    std::vector<CapacityBar> bars;
};

/// The newest search of each arm, arms in the order they were first searched.
/// Baseline: the first arm searched at precision fp32 without checkpointing,
/// else the first arm.
CapacityChart capacityChart(const std::vector<store::BatchSearchRow>& searches);

}  // namespace ampbench::analysis
