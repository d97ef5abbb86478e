#pragma once
// The flags of `run`, `launch` and `find-batch` that set one spec field each,
// declared once as a table of (flag names, field path). Each flag's help, its type
// check and its allowed values come from the spec's field table
// (core/config/SpecFields.h), so a flag never repeats what the field says. Flags
// that do more than set one field (--preset, --config, --model, --data, --arm,
// --seeds) stay hand-written in main.cpp.
#include <CLI/CLI.hpp>
#include <vector>

#include "cli/Commands.h"
#include "core/config/ExperimentSpec.h"
#include "core/config/Validation.h"

namespace ampbench::cli {

struct SpecFlag {
    const char* names;  ///< CLI11 names, e.g. "--micro-steps,--steps"
    const char* path;   ///< the field (config::findField<ExperimentSpec>)
    /// For the command line, where the field's own help (written for the editor)
    /// does not say enough; null: the field's.
    const char* help = nullptr;
    /// A switch field (auto, true, false) as two flags: `names` sets it true and this
    /// one false; unset, it stays as the preset or file says. Null for other fields.
    const char* off = nullptr;
};

const std::vector<SpecFlag>& specFlags();

/// Adds every flag of the table to `cmd`, its value going to `ro.fields` (a bool
/// field: a switch, to `ro.switches`), checked as its field's type and values.
void addSpecFlags(CLI::App* cmd, RunOverrides& ro);

/// Sets the fields the flags gave on `spec`; a value its field cannot take is added
/// to `errors`, named by its flag.
void applySpecFlags(const RunOverrides& ro, config::ExperimentSpec& spec,
                    std::vector<config::FieldError>& errors);

}  // namespace ampbench::cli
