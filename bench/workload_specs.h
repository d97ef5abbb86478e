#pragma once
// The benchmark cells: one single-arm spec per workload × arm. bench/reference.py
// builds the same cells in PyTorch; keep the two in step.
#include <string>
#include <vector>

#include "core/config/ExperimentSpec.h"

namespace ampbench::bench {

struct Cell {
    std::string arm;
    config::ExperimentSpec spec;    ///< one arm; steps = (warm-up + timed) × K micro-batches
    double items_per_sample = 1;    ///< tokens per sequence for the decoder
    double flops_per_item = 0;      ///< training FLOPs per token (decoder), else 0
    bool measure_overhead = false;  ///< also run bare to measure the recording cost
};

std::vector<Cell> workloadCells(const std::string& workload, bool quick);

}  // namespace ampbench::bench
