#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "core/config/ExperimentSpec.h"

namespace ampbench::config {

/// One problem with a spec: which field (a JSON path such as "arms[1].accumulation"),
/// the offending value as text, and what is allowed.
struct FieldError {
    std::string field;
    std::string value;
    std::string message;
    std::string toString() const;  ///< "arms[1].accumulation = 0: must be between 1 and 1024"
};

/// Names are shown in tables, plots and file names: long enough for a description,
/// short enough to lay out.
constexpr size_t kMaxExperimentNameLength = 200;
constexpr size_t kMaxArmNameLength = 64;

/// "arms[2].scaler.init_scale" names arm 2's field "scaler.init_scale": how every
/// front end finds the arm (and the arm's field) an error is about.
struct ArmFieldPath {
    size_t arm = 0;
    std::string field;
};
std::optional<ArmFieldPath> armFieldPath(const std::string& path);

/// A letter, digit or one of _ . + -: what an arm name may hold, and what a file
/// name made from a name keeps.
bool nameChar(char c);

/// Every problem found; empty means the spec may run.
std::vector<FieldError> validate(const ExperimentSpec& spec);

}  // namespace ampbench::config
