#pragma once
// What FP32 islands cost: each arm with fp32_modules against the plain AMP arm it
// differs from only by them. Pure.
#include <string>
#include <vector>

#include "core/analysis/ExperimentAnalysis.h"
#include "core/config/ExperimentSpec.h"

namespace ampbench::analysis {

struct IslandCost {
    std::string arm;          ///< the arm with islands
    std::string modules;      ///< its fp32_modules
    std::string plain;        ///< the arm it is compared with; empty: none in the experiment
    double step_ratio = 0;    ///< its time per sample ÷ the plain arm's (1.25: 25% slower)
    double memory_ratio = 0;  ///< its peak memory ÷ the plain arm's
    double median_step_ms = 0, plain_median_step_ms = 0;
    int64_t peak_mem = 0, plain_peak_mem = 0;
};

/// One entry per arm with FP32 islands; the plain arm is the first arm with the same
/// precision, accumulation, loss scaling, checkpointing and memory format and no
/// islands.
std::vector<IslandCost> islandCosts(const config::ExperimentSpec& spec,
                                    const ExperimentAnalysis& analysis);

}  // namespace ampbench::analysis
