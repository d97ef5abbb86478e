#pragma once
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/config/ExperimentSpec.h"
#include "core/config/Validation.h"

namespace ampbench::config {

nlohmann::json toJson(const ExperimentSpec& spec);
nlohmann::json toJson(const ArmSpec& arm);

/// Reads what it can: fields missing from the JSON keep their defaults; each field of
/// the wrong type or unknown name is reported in `errors` (by JSON path) and skipped.
ExperimentSpec specFromJson(const nlohmann::json& json, std::vector<FieldError>& errors);
ArmSpec armFromJson(const nlohmann::json& json, const std::string& path,
                    std::vector<FieldError>& errors);

/// Text round trip. A syntax error is reported as one FieldError with field "(file)".
std::string specToJsonText(const ExperimentSpec& spec);
ExperimentSpec specFromJsonText(const std::string& text, std::vector<FieldError>& errors);

}  // namespace ampbench::config
