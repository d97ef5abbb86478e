#pragma once
#include <optional>
#include <string>

#include "core/config/ExperimentSpec.h"

namespace ampbench::config {

/// Parses the CLI's arm shorthand: NAME=PRECISION[,key=value...]. The keys are the
/// `shorthand` names in the arm's field table (SpecFields.cpp): accum (K), lr
/// (linear|sqrt|none), clip (max norm), tf32, channels_last, checkpoint, graph (a bare
/// key means 1), repeats, init_scale, growth_interval. Example:
/// "amp-accum4=amp,accum=4,lr=linear". On failure returns nullopt and sets `error` to a
/// message naming the bad part.
std::optional<ArmSpec> parseArmShorthand(const std::string& text, std::string& error);

}  // namespace ampbench::config
