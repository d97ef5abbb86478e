#pragma once
// `run --script`: the user's own Python training script trains each planned run,
// recording through the ampbench package (python/ampbench) into a pipe read into the
// run's rows as they come (core/script, which the desktop trains it through too).
#include <cstdio>
#include <string>

#include "cli/Commands.h"
#include "core/config/Validation.h"

namespace ampbench::cli {

/// Plans the experiment of `spec` (arms, seeds; the script is the model), runs
/// `o.script` once per planned run with the arm's settings in AMPBENCH_* variables,
/// records what it streams into that run, then prints the table and each arm's
/// verdict as `run` does. The stored spec keeps the script's arguments (model.args:
/// the spec's, then each --script-arg) and a --python interpreter, so a rerun repeats
/// them. Exit codes as `run`'s; 3 when the script or the Python interpreter with the
/// ampbench package cannot be found.
int runScript(const std::string& db_path, const config::ValidSpec& spec, const RunOverrides& o,
              std::FILE* stream = nullptr);

}  // namespace ampbench::cli
