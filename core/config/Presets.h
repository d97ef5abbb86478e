#pragma once
#include <optional>
#include <string>
#include <vector>

#include "core/config/ExperimentSpec.h"

namespace ampbench::config {

/// Built-in experiments. "default" is the three-arm Fashion-MNIST comparison
/// (fp32, amp, amp with accumulation 4 and linear LR scaling).
std::vector<std::string> presetNames();
std::optional<ExperimentSpec> preset(const std::string& name);
std::string presetDescription(const std::string& name);

}  // namespace ampbench::config
