#pragma once
// What the script runner's parts share (ScriptRun.cpp runs, ScriptEnvironment.cpp
// writes the environment, ScriptSetup.cpp checks the interpreter): private to script/.
#include <string>
#include <utility>
#include <vector>

#include "core/config/ExperimentSpec.h"
#include "core/config/PlannedArm.h"
#include "core/script/ScriptRun.h"
#include "core/train/Experiment.h"

namespace ampbench::script {

/// The settings of one planned run for the script, as AMPBENCH_* variables.
std::vector<std::pair<std::string, std::string>> armVariables(const config::ExperimentSpec& spec,
                                                              const train::ExperimentPlan& plan,
                                                              const train::PlannedRun& r,
                                                              const config::PlannedArm& planned,
                                                              const std::string& device);
/// The precision among `vars` (AMPBENCH_PRECISION).
std::string precisionOf(const std::vector<std::pair<std::string, std::string>>& vars);
/// The child's environment: this process's, less any AMPBENCH_* of its own (a stream
/// path set by hand must not take the run's records elsewhere), plus `vars`, the
/// package's folder first on PYTHONPATH and unbuffered output.
std::vector<std::string> childEnvironment(
    const std::vector<std::pair<std::string, std::string>>& vars, const std::string& package);

/// A line for the front end, where it listens.
inline void say(const ScriptSettings& s, const std::string& line) {
    if (s.say) {
        s.say(line);
    }
}

}  // namespace ampbench::script
