#pragma once
// `run --script`: the user's own Python training script trains each planned run,
// recording through the ampbench package (python/ampbench) into a pipe read into the
// run's rows as they come (core/script, which the desktop trains it through too).
#include <cstdio>
#include <optional>
#include <string>

#include "cli/Commands.h"
#include "core/config/Validation.h"
#include "core/script/ScriptRun.h"

namespace ampbench::cli {

/// What `run --script` and `launch --script` check before anything is planned: the
/// spec as it is stored (`out`: model "script", the script's absolute path, model.args
/// the spec's then each --script-arg, a --python interpreter, named for the script
/// unless a name, a spec file or a stored spec names it), the arms (no data-parallel
/// ranks: 2), the script file (3), --script-silence (2), the interpreter with the
/// ampbench package (3) and the device (2), into `settings`. kOk or the exit code,
/// after printing why.
int prepareScript(const config::ValidSpec& given, const RunOverrides& o,
                  std::optional<config::ValidSpec>& out, script::ScriptSettings& settings);

/// How the runs are packed, for the line that starts the experiment: ", 4 at a time
/// (2 GPUs × runs_per_gpu 2)"; empty when they train one at a time.
std::string packingText(const config::ExperimentSpec& spec, const script::ScriptSettings& settings);

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
