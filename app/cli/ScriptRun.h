#pragma once
// `run --script`: the user's own Python training script trains each planned run,
// recording through the ampbench package (python/ampbench) into a pipe this process
// reads into the run's rows as they come.
#include <cstdio>
#include <string>
#include <vector>

#include "cli/Commands.h"
#include "core/config/Validation.h"

namespace ampbench::cli {

/// The file descriptor the script's record stream arrives on (AMPBENCH_STREAM_FD).
constexpr int kScriptStreamFd = 3;

/// Plans the experiment of `spec` (arms, seeds; the script is the model), runs
/// `o.script` once per planned run with the arm's settings in AMPBENCH_* variables,
/// records what it streams into that run, then prints the table and each arm's
/// verdict as `run` does. Exit codes as `run`'s; 3 when the script or the Python
/// interpreter with the ampbench package cannot be found.
int runScript(const std::string& db_path, const config::ValidSpec& spec, const RunOverrides& o,
              std::FILE* stream = nullptr);

/// The folder holding the ampbench Python package for a child's PYTHONPATH: the
/// checkout's python/ above this binary, or <prefix>/lib/python3/dist-packages next
/// to it; empty when neither has it (Debian's python3 finds the installed one).
std::string pythonPackageDir();

}  // namespace ampbench::cli
