#pragma once
// What a run trains, as planned: the arm as written plus what it resolves to on
// the device. Stored with each run (runs.spec_json) and read back by the analysis
// as this record, never key by key.
#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "core/config/ExperimentSpec.h"

namespace ampbench::config {

struct PlannedArm {
    ArmSpec arm;
    /// fp32, amp-fp16 or amp-bf16 (never amp): what ran. Unset in runs recorded
    /// before it was stored; resolvedOn() then derives it from the device.
    std::optional<Precision> precision;
    double lr = std::numeric_limits<double>::quiet_NaN();  ///< after the arm's LR rule
    int64_t effective_batch = 0;                           ///< micro-batch × K × ranks
    int world_size = 1;   ///< data-parallel ranks the run trains on
    std::string backend;  ///< "gloo" (CPU) or "nccl" (CUDA) when world_size > 1; else empty
    /// The run is a pass that times the arm alone (an advice's: warm-up and timed steps,
    /// no evaluation): the analysis takes the arm's speed and memory from it and leaves it
    /// out of the arm's curves and verdict.
    bool timing_pass = false;

    /// The precision that ran on `device` ("cpu", "cuda:0").
    Precision resolvedOn(const std::string& device) const;
};

/// `amp` becomes amp-fp16 on CUDA and amp-bf16 on CPU; the others stay.
Precision resolvePrecision(Precision precision, bool cuda);

/// The plan of one arm of `spec` on a CUDA device or not.
PlannedArm planArm(const ExperimentSpec& spec, const ArmSpec& arm, bool cuda);

/// JSON: the arm's own fields, plus "resolved_precision", "lr", "effective_batch",
/// "timing_pass" for a pass and, for a data-parallel arm, "world_size" and "backend".
std::string plannedArmToJson(const PlannedArm& planned);
/// Reads what plannedArmToJson wrote, and the rows of older versions (no resolved
/// precision). Never throws: what cannot be read keeps its default.
PlannedArm plannedArmFromJson(const std::string& text);

/// Why `text`, a run's stored arm, cannot be read as the plan of arm `arm`, as words
/// that follow the record's name (" is not JSON", ": lr = \"x\": expected a number",
/// " names arm \"b\", but the run is arm \"a\""); empty when it can (or is empty, as
/// before arms were stored). A field this build does not know is no problem.
std::string plannedArmProblem(const std::string& text, const std::string& arm);

}  // namespace ampbench::config
