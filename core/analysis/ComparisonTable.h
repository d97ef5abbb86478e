#pragma once
#include <string>
#include <vector>

#include "core/analysis/Format.h"
#include "core/analysis/Summary.h"

namespace ampbench::analysis {

/// The comparison table the CLI prints and the GUI copies: one row per arm with
/// median step time (p10–p90), samples/s, peak memory, final validation accuracy,
/// skipped steps, and speed-up / memory ratio against the baseline arm.
TextTable comparisonTable(const std::vector<ArmSummary>& arms, const std::string& memory_label);

}  // namespace ampbench::analysis
