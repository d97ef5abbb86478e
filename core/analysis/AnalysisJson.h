#pragma once
// The analysis as JSON: summary, gains, health and verdict per arm, the noise
// band and the arms' curves. Unknown figures are null.
#include <nlohmann/json_fwd.hpp>

#include "core/analysis/ExperimentAnalysis.h"
#include "core/analysis/ExperimentData.h"

namespace ampbench::analysis {

nlohmann::json toJson(const ExperimentAnalysis& analysis);
nlohmann::json toJson(const ArmVerdict& verdict);

/// What a report's JSON holds: the analysis, the stored spec and the environment of
/// the first run that recorded one. The GUI's reports and `ampbench-cli show --json`.
nlohmann::json reportJson(const ExperimentData& data, const ExperimentAnalysis& analysis);

}  // namespace ampbench::analysis
