#pragma once
// The analysis as JSON: summary, gains, health and verdict per arm, the noise
// band and the arms' curves. Unknown figures are null.
#include <nlohmann/json_fwd.hpp>

#include "core/analysis/ExperimentAnalysis.h"

namespace ampbench::analysis {

nlohmann::json toJson(const ExperimentAnalysis& analysis);
nlohmann::json toJson(const ArmVerdict& verdict);

}  // namespace ampbench::analysis
