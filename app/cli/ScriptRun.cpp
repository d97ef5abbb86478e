// `ampbench-cli run --script train.py`: the user's training script trains each run.
#include "cli/ScriptRun.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <optional>

#include "cli/ExitCodes.h"
#include "cli/Terminal.h"
#include "core/analysis/Format.h"
#include "core/config/Placement.h"
#include "core/parallel/Machine.h"
#include "core/script/ScriptRun.h"
#include "core/train/Trainer.h"
#include "core/util/Words.h"

namespace ampbench::cli {
namespace {

namespace fs = std::filesystem;

/// Whether `python` runs and imports the ampbench package: nothing is planned when
/// a run could not even start. Prints why not.
bool checkInterpreter(const std::string& python, const std::string& package) {
    const script::InterpreterCheck check = script::checkInterpreter(python, package);
    if (check.ok) {
        return true;
    }
    if (check.cannot_start) {
        say(stderr,
            "--python %s: %s (name the interpreter with --python or AMPBENCH_PYTHON; nothing was "
            "run)\n",
            python.c_str(), check.detail.c_str());
    } else {
        say(stderr,
            "%s cannot import the ampbench package (%s); it is installed with the workbench "
            "(/usr/lib/python3/dist-packages) or found in a checkout's python/ folder; nothing "
            "was run\n",
            python.c_str(), check.detail.c_str());
    }
    return false;
}

}  // namespace

std::string packingText(const config::ExperimentSpec& spec,
                        const script::ScriptSettings& settings) {
    const int gpus = script::packedGpus(spec, settings.device, settings.gpus);
    if (gpus == 0) {
        return {};
    }
    const int at_once = gpus * std::max(1, spec.runs_per_gpu);
    if (!config::onCuda(settings.device)) {
        return ", " + std::to_string(at_once) + " at a time (runs_per_gpu)";
    }
    return ", " + std::to_string(at_once) + " at a time (" + std::to_string(gpus) + " GPU" +
           (gpus == 1 ? "" : "s") + " × runs_per_gpu " + std::to_string(spec.runs_per_gpu) + ")";
}

int prepareScript(const config::ValidSpec& given, const RunOverrides& o,
                  std::optional<config::ValidSpec>& out, script::ScriptSettings& settings) {
    for (size_t i = 0; i < given.spec().arms.size(); ++i) {
        const config::ArmSpec& arm = given.spec().arms[i];
        if (arm.ranks > 1) {
            say(stderr,
                "arm '%s' (row %zu): ranks = %d: a script trains in one process; data-parallel "
                "arms are for the built-in models (nothing was run)\n",
                analysis::printable(arm.name, false).c_str(), i + 1, arm.ranks);
            return kUsage;
        }
    }
    // --script, or a spec whose model is the script (a --config file, a rerun).
    const std::string script_path = o.script.empty() ? given.spec().model.file : o.script;
    std::error_code ec;
    const fs::path script = fs::absolute(script_path, ec);
    // The stored spec says that the script trained, which, with which arguments and
    // interpreter. Named for the script unless a name, a spec file or a stored spec
    // names it.
    config::ExperimentSpec named = given.spec();
    named.model.name = "script";
    named.model.file = script.string();
    std::string split_error;
    if (auto words = util::splitWords(named.model.args, split_error);
        words && !o.script_args.empty()) {
        // Stored arguments that do not split stay as they are: validation names them.
        words->insert(words->end(), o.script_args.begin(), o.script_args.end());
        named.model.args = util::joinWords(*words);
    }
    if (!o.python.empty()) {
        named.model.python = o.python;
    }
    if (o.name.empty() && o.config_file.empty() && !o.base) {
        named.name = fs::path(script_path).filename().string();
    }
    std::vector<config::FieldError> errors;
    out = config::ValidSpec::check(named, errors);
    if (!out) {
        out = given;
    }
    const config::ExperimentSpec& spec = out->spec();
    if (const std::string problem = script::scriptFileProblem(script_path); !problem.empty()) {
        say(stderr, "--script %s: %s (nothing was run)\n",
            analysis::printable(script_path, false).c_str(), problem.c_str());
        return kDataMissing;
    }
    if (!(o.script_silence_s >= 0) || !std::isfinite(o.script_silence_s)) {
        say(stderr, "--script-silence %g: seconds from 0 (never) up\n", o.script_silence_s);
        return kUsage;
    }
    settings.python = script::interpreterFor(spec.model, o.python);
    settings.silence_s = o.script_silence_s;
    settings.package = script::pythonPackageDir();
    settings.say = [](const std::string& line) { say(stderr, "%s\n", line.c_str()); };
    if (!checkInterpreter(settings.python, settings.package)) {
        return kDataMissing;
    }
    try {
        settings.device = train::resolveDevice(spec.device);
    } catch (const std::exception& e) {
        say(stderr, "device: %s (nothing was run)\n", e.what());
        return kUsage;
    }
    settings.gpus = config::onCuda(settings.device) ? parallel::rankCapacity(true).gpus : 0;
    return kOk;
}

int runScript(const std::string& db_path, const config::ValidSpec& given, const RunOverrides& o,
              std::FILE* stream) {
    std::optional<config::ValidSpec> prepared;
    script::ScriptSettings settings;
    if (const int code = prepareScript(given, o, prepared, settings); code != kOk) {
        return code;
    }
    return trainSpec(db_path, *prepared, settings.device, o.quiet, 0, stream, &settings);
}

}  // namespace ampbench::cli
