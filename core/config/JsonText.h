#pragma once
// JSON text from a user (a spec file, a pasted spec): read without crashing on
// what a parser accepts but a program cannot hold.
#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "core/config/Validation.h"

namespace ampbench::config {

/// Deeper nesting than any spec needs; a file nested deeper is refused before
/// anything recursive walks it.
constexpr std::size_t kMaxJsonDepth = 64;

/// Parses `text`. On failure returns nullopt and sets `error`: a syntax error with
/// its position, a number too large for a double (1e400) named by its path
/// ("optimizer.lr"), or nesting deeper than `max_depth` with the path where it
/// went too deep.
std::optional<nlohmann::json> parseJsonText(const std::string& text, FieldError& error,
                                            std::size_t max_depth = kMaxJsonDepth);

}  // namespace ampbench::config
