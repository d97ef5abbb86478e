// `ampbench-cli run --script train.py`: the user's training script trains each run.
#include "cli/ScriptRun.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <memory>
#include <optional>

#include "cli/ExitCodes.h"
#include "cli/Interrupt.h"
#include "cli/OpenDatabase.h"
#include "cli/Progress.h"
#include "cli/StreamOutput.h"
#include "cli/Terminal.h"
#include "core/analysis/Format.h"
#include "core/config/Placement.h"
#include "core/data/DataError.h"
#include "core/parallel/Machine.h"
#include "core/probe/Environment.h"
#include "core/script/ScriptRun.h"
#include "core/store/Database.h"
#include "core/train/Experiment.h"
#include "core/train/Trainer.h"
#include "core/util/Words.h"

namespace ampbench::cli {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

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

namespace {

/// The table and each arm's verdict, as `run` prints them.
void printResult(store::Database& db, const config::ExperimentSpec& spec,
                 const train::ExperimentPlan& plan, const std::string& device,
                 const std::string& db_path, double total_s) {
    printArmTable(db, spec, plan.experiment_id, device, "as the script recorded them",
                  "CPU: peak resident set of the script's process");
    printVerdicts(db, plan.experiment_id);
    say(stdout, "experiment %lld in %s; total time %.1f s\n",
        static_cast<long long>(plan.experiment_id), db_path.c_str(), total_s);
}

}  // namespace

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
    const auto t0 = Clock::now();
    std::optional<config::ValidSpec> prepared;
    script::ScriptSettings settings;
    if (const int code = prepareScript(given, o, prepared, settings); code != kOk) {
        return code;
    }
    const config::ValidSpec& valid = *prepared;
    const config::ExperimentSpec& spec = valid.spec();
    const std::string& device = settings.device;
    std::unique_ptr<store::Database> db = openOrSay(db_path);
    if (!db) {
        return kStoreError;
    }
    StreamTap tap(*db, stream);
    RunStreamer* const streamer = tap.streamer();
    settings.environment_json = probe::toJson(probe::probeEnvironment(device));
    run::CancelToken cancel;
    std::unique_ptr<InterruptScope> interrupt;
    std::unique_ptr<Progress> progress;
    bool failed = false;
    int index = 0;
    train::ExperimentHooks hooks;
    hooks.setup_checked = true;  // the script, the interpreter and the arms, above
    hooks.planned = [&](const train::ExperimentPlan& plan) {
        if (streamer) {
            streamer->planned(settings.environment_json, plan.experiment_id);
        }
        if (!o.quiet) {
            say(stderr, "experiment %lld '%s': %zu runs of %s on %s%s, recording to %s\n",
                static_cast<long long>(plan.experiment_id),
                analysis::printable(spec.name, false).c_str(), plan.runs.size(),
                analysis::printable(
                    util::joinWords(script::commandLine(spec.model, settings.python)), false)
                    .c_str(),
                device.c_str(), packingText(spec, settings).c_str(), db_path.c_str());
        }
        interrupt = std::make_unique<InterruptScope>(cancel);
        progress = std::make_unique<Progress>(static_cast<int>(plan.runs.size()),
                                              isatty(STDERR_FILENO) != 0, o.quiet);
    };
    hooks.starting = [&](const train::PlannedRun& r) -> run::TrainObserver* {
        return progress->beginRun(index++, r.arm, r.seed, r.planned_steps);
    };
    hooks.finished = [&](const train::PlannedRun&, const run::RunOutcome& outcome) {
        failed = failed || outcome.status != run::RunStatus::Finished;
    };
    train::ExperimentResult result;
    try {
        result = script::runScriptExperiment(*db, valid, cancel, hooks, settings);
    } catch (const store::StoreError& e) {
        say(stderr, "%s\n", e.what());
        return kStoreError;
    } catch (const train::SpecError& e) {
        say(stderr, "%s\n", e.what());
        return kUsage;
    } catch (const data::DataError& e) {
        say(stderr, "%s\n", e.what());
        return kDataMissing;
    }
    interrupt.reset();
    if (streamer) {
        streamer->closeExperiment(result.plan.experiment_id);
        db->setRecordListener(nullptr);
    }
    printResult(*db, spec, result.plan, device, db_path,
                std::chrono::duration<double>(Clock::now() - t0).count());
    if (cancel.cancelled()) {
        say(stderr, "cancelled: the rows recorded so far are kept\n");
        return kCancelled;
    }
    return failed ? kRunsFailed : kOk;
}

}  // namespace ampbench::cli
