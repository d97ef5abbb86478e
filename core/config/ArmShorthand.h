#pragma once
#include <optional>
#include <string>

#include "core/config/ExperimentSpec.h"

namespace ampbench::config {

/// Parses the CLI's arm shorthand: NAME=PRECISION[,key=value...] with keys
/// accum (K), lr (linear|sqrt|none), clip (max norm), tf32 (0|1),
/// channels_last (0|1), checkpoint (0|1), graph (0|1: CUDA graph), repeats (N), init_scale,
/// growth_interval. Example: "amp-accum4=amp,accum=4,lr=linear". On failure returns nullopt and
/// sets `error` to a message naming the bad part.
std::optional<ArmSpec> parseArmShorthand(const std::string& text, std::string& error);

}  // namespace ampbench::config
