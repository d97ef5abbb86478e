#pragma once
// A training script as the model: the user's own Python loop trains each planned run
// of an experiment, recording through the ampbench package (python/ampbench) into a
// pipe read here into that run's rows as they come. The CLI's `run --script` and the
// desktop's worker both train a spec whose model is `script` through this.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/config/ExperimentSpec.h"
#include "core/config/Validation.h"
#include "core/run/TrainObserver.h"
#include "core/store/Database.h"
#include "core/train/Advise.h"
#include "core/train/Experiment.h"
#include "core/train/SetupCheck.h"

namespace ampbench::script {

/// How the scripts of one experiment are started and watched.
struct ScriptSettings {
    /// The interpreter: empty takes interpreterFor(spec.model).
    std::string python;
    /// A script that records nothing for this long is stopped (0: never).
    double silence_s = 900;
    /// How long the check before the runs waits for the interpreter to import the
    /// script's modules (torch can take seconds on a cold disk).
    double import_timeout_s = 60;
    /// The folder of the ampbench package put first on the script's PYTHONPATH; empty
    /// takes pythonPackageDir().
    std::string package;
    /// The device (`cpu`, `cuda:0`) and environment the runs record; empty: resolved
    /// and probed here.
    std::string device;
    std::string environment_json;
    /// CUDA devices visible to the scripts, for spreading runs over them (the front end
    /// counts them; this library holds no LibTorch); 0 counts as one.
    int gpus = 0;
    /// Lines for the user: problems with a record stream, a run that could not be
    /// recorded. Empty: not said.
    std::function<void(const std::string&)> say;
};

/// The interpreter for a script: `given`, else the spec's model.python, else
/// $AMPBENCH_PYTHON, else python3 on the PATH.
std::string interpreterFor(const config::ModelSpec& model, const std::string& given = {});

/// The command that trains one run: the interpreter, the script's absolute path and the
/// spec's model.args as words. std::invalid_argument when model.args does not split
/// (validation names it first).
std::vector<std::string> commandLine(const config::ModelSpec& model, const std::string& python);

/// What is wrong with the script file at `path` ("no such file", "is a folder, not a
/// script"); empty when it is a readable regular file.
std::string scriptFileProblem(const std::string& path);

/// The modules a script needs, by top-level name in the order first seen: those its
/// unindented `import a, b.c` and `from a.b import c` lines name (an import inside a
/// try or a function is optional to it), then those of the modules beside it that it
/// imports (helpers.py, helpers/__init__.py), one level down. Relative imports and
/// __future__ are left out; an unreadable file gives none.
std::vector<std::string> scriptImports(const std::string& path);

/// Whether `python` starts and imports the ampbench package and `modules`.
struct InterpreterCheck {
    /// A module the interpreter cannot import, with what Python said.
    struct Missing {
        std::string module;
        std::string error;  ///< "ModuleNotFoundError: No module named 'torch'"
    };
    bool ok = false;
    bool cannot_start = false;  ///< not found or not executable
    bool timed_out = false;     ///< stopped after the timeout, still importing
    std::string detail;         ///< the last line it printed, or why it did not start
    std::vector<Missing> missing;
};
/// Starts `python` with `package` first on its PYTHONPATH and `folder` (the script's)
/// on sys.path, as a script run would, and imports ampbench and torch (when named in
/// `modules`) and looks up the other `modules` without running them. Stops it after
/// `timeout_s`.
InterpreterCheck checkInterpreter(const std::string& python, const std::string& package,
                                  const std::vector<std::string>& modules = {},
                                  double timeout_s = 60, const std::string& folder = {});

/// The check before a script trains: the script file, the interpreter with the ampbench
/// package and the modules the script imports (scriptImports), the device, arms a script cannot
/// train (data-parallel ranks). Each problem names the field to change (model.file, model.python,
/// arms[i].ranks, device).
train::SetupReport checkScriptSetup(const config::ExperimentSpec& spec,
                                    const ScriptSettings& settings = {});

/// The folder holding the ampbench Python package for a child's PYTHONPATH: the
/// checkout's python/ above this binary, or <prefix>/lib/python3/dist-packages next
/// to it; empty when neither has it (Debian's python3 finds the installed one).
std::string pythonPackageDir();

/// The GPUs script runs are spread over, 0 when they train one at a time: on CUDA
/// min(spec.gpus or all, `visible_gpus`) when that is more than one or runs_per_gpu
/// is; on the CPU 1 when runs_per_gpu > 1 (that many scripts at once), else 0.
int packedGpus(const config::ExperimentSpec& spec, const std::string& device, int visible_gpus);

/// As train::runExperiment, with the script as the trainer: checks the file, the spec
/// and (unless hooks.setup_checked) checkScriptSetup (train::SetupError, nothing
/// written), plans the experiment, starts the script once per run with the arm's
/// settings in AMPBENCH_* variables, records what it streams into that run, and marks
/// what never started as cancelled. Runs train one at a time, or when packedGpus says
/// so up to runs_per_gpu scripts at once per GPU (on the CPU: at once), each with its
/// own stream and rows, AMPBENCH_DEVICE naming its GPU when there are several, and a
/// warning event on each run another run shared its device with. The hooks' skip,
/// run_cancel, starting and finished are heard as there, one call at a time, whether
/// the runs train one at a time or side by side. Planning throws as planExperiment does.
train::ExperimentResult runScriptExperiment(store::Database& db, const config::ValidSpec& spec,
                                            const run::CancelToken& cancel,
                                            const train::ExperimentHooks& hooks = {},
                                            const ScriptSettings& settings = {},
                                            int64_t rerun_of = 0);

/// The same for a spec not validated yet: the file's damage is named before the spec's
/// problems (train::SpecError), as train::runExperiment's overload for a plain spec.
train::ExperimentResult runScriptExperiment(store::Database& db, const config::ExperimentSpec& spec,
                                            const run::CancelToken& cancel,
                                            const train::ExperimentHooks& hooks = {},
                                            const ScriptSettings& settings = {});

/// The runs of `plan` (planned in `db` already) trained by the script, as
/// runScriptExperiment trains its own after planning; what never started after a cancel
/// is recorded cancelled. An advice's passes and quality check train this way.
train::ExperimentResult trainScriptRuns(store::Database& db, const config::ValidSpec& spec,
                                        train::ExperimentPlan plan, const run::CancelToken& cancel,
                                        const train::ExperimentHooks& hooks = {},
                                        const ScriptSettings& settings = {});

/// How an advice trains with a script as its model (train::advise): each pass and the
/// quality check through trainScriptRuns; no max-batch search (the script holds its own
/// memory); every format the spec allows is tried (the script's PyTorch says in its pass
/// whether it runs).
train::AdviseTrainer scriptAdviseTrainer(store::Database& db, const ScriptSettings& settings);

}  // namespace ampbench::script
