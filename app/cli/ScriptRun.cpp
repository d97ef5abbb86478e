// `ampbench-cli run --script train.py`: the user's training script trains each run.
#include "cli/ScriptRun.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "cli/Detach.h"
#include "cli/ExitCodes.h"
#include "cli/Interrupt.h"
#include "cli/Progress.h"
#include "cli/ScriptProcess.h"
#include "cli/StreamOutput.h"
#include "cli/Terminal.h"
#include "core/analysis/ComparisonTable.h"
#include "core/analysis/Format.h"
#include "core/analysis/Summary.h"
#include "core/config/PlannedArm.h"
#include "core/data/DataError.h"
#include "core/probe/Environment.h"
#include "core/store/Database.h"
#include "core/store/RunRecorder.h"
#include "core/stream/RecordStream.h"
#include "core/train/Experiment.h"
#include "core/train/Trainer.h"

extern char** environ;

namespace ampbench::cli {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

std::string quoted(const std::vector<std::string>& words) {
    std::string out;
    for (const auto& w : words) {
        const bool plain = !w.empty() && w.find_first_of(" \t\n'\"\\$`") == std::string::npos;
        out += (out.empty() ? "" : " ") + (plain ? w : "'" + w + "'");
    }
    return out;
}

/// The settings of one planned run for the script, as AMPBENCH_* variables.
std::vector<std::pair<std::string, std::string>> armVariables(const config::ExperimentSpec& spec,
                                                              const train::ExperimentPlan& plan,
                                                              const train::PlannedRun& r,
                                                              const config::PlannedArm& planned,
                                                              const std::string& device) {
    const config::ArmSpec& arm = planned.arm;
    const bool cuda = device.rfind("cuda", 0) == 0;
    const config::Precision precision =
        planned.precision ? *planned.precision : config::resolvePrecision(arm.precision, cuda);
    auto number = [](double v) {
        char buf[40];
        std::snprintf(buf, sizeof buf, "%.17g", v);
        return std::string(buf);
    };
    nlohmann::json scaler = {{"init_scale", arm.scaler.init_scale},
                             {"growth_factor", arm.scaler.growth_factor},
                             {"backoff_factor", arm.scaler.backoff_factor},
                             {"growth_interval", arm.scaler.growth_interval}};
    return {
        {"AMPBENCH_STREAM_FD", std::to_string(kScriptStreamFd)},
        {"AMPBENCH_RUN_ID", std::to_string(r.run_id)},
        {"AMPBENCH_EXPERIMENT_ID", std::to_string(plan.experiment_id)},
        {"AMPBENCH_EXPERIMENT", spec.name},
        {"AMPBENCH_ARM", r.arm},
        {"AMPBENCH_ARM_INDEX", std::to_string(r.arm_index)},
        {"AMPBENCH_SEED", std::to_string(r.seed)},
        {"AMPBENCH_PRECISION", config::toString(precision)},
        {"AMPBENCH_ACCUMULATION", std::to_string(arm.accumulation)},
        {"AMPBENCH_LR",
         number(std::isnan(planned.lr) ? config::scaledLearningRate(spec, arm) : planned.lr)},
        {"AMPBENCH_BASE_LR", number(spec.optimizer.lr)},
        {"AMPBENCH_LR_RULE", config::toString(arm.lr_rule)},
        {"AMPBENCH_MICRO_BATCH", std::to_string(spec.micro_batch)},
        {"AMPBENCH_EFFECTIVE_BATCH", std::to_string(planned.effective_batch)},
        {"AMPBENCH_PLANNED_STEPS", std::to_string(r.planned_steps)},
        {"AMPBENCH_MICRO_STEPS", std::to_string(spec.micro_steps)},
        {"AMPBENCH_WARMUP_STEPS", std::to_string(spec.warmup_steps)},
        {"AMPBENCH_EVAL_INTERVAL", std::to_string(spec.eval_interval)},
        {"AMPBENCH_DEVICE", device},
        {"AMPBENCH_DATA", spec.data.path},
        {"AMPBENCH_DATA_DIR", spec.data.dir},
        {"AMPBENCH_GRAD_CLIP", number(arm.grad_clip)},
        {"AMPBENCH_LOSS_SCALING", arm.loss_scaling ? "1" : "0"},
        {"AMPBENCH_SCALER", scaler.dump()},
        {"AMPBENCH_ARM_JSON", config::plannedArmToJson(planned)},
    };
}

std::string precisionOf(const std::vector<std::pair<std::string, std::string>>& vars) {
    for (const auto& [k, v] : vars) {
        if (k == "AMPBENCH_PRECISION") {
            return v;
        }
    }
    return {};
}

/// The child's environment: this process's, less any AMPBENCH_* of its own (a stream
/// path set by hand must not take the run's records elsewhere), plus `vars`, the
/// package's folder first on PYTHONPATH and unbuffered output.
std::vector<std::string> childEnvironment(
    const std::vector<std::pair<std::string, std::string>>& vars, const std::string& package) {
    std::vector<std::string> out;
    std::string pythonpath;
    for (char** e = environ; e && *e; ++e) {
        const std::string entry = *e;
        if (entry.rfind("AMPBENCH_", 0) == 0 || entry.rfind("PYTHONUNBUFFERED=", 0) == 0) {
            continue;
        }
        if (entry.rfind("PYTHONPATH=", 0) == 0) {
            pythonpath = entry.substr(11);
            continue;
        }
        out.push_back(entry);
    }
    for (const auto& [k, v] : vars) {
        out.push_back(k + "=" + v);
    }
    if (!package.empty()) {
        pythonpath = pythonpath.empty() ? package : package + ":" + pythonpath;
    }
    if (!pythonpath.empty()) {
        out.push_back("PYTHONPATH=" + pythonpath);
    }
    out.push_back("PYTHONUNBUFFERED=1");
    return out;
}

/// The interpreter for the script: --python, else $AMPBENCH_PYTHON, else python3.
std::string interpreter(const RunOverrides& o) {
    if (!o.python.empty()) {
        return o.python;
    }
    const char* env = std::getenv("AMPBENCH_PYTHON");
    return env && *env ? env : "python3";
}

/// Whether `python` runs and imports the ampbench package: nothing is planned when
/// a run could not even start. Prints why not.
bool checkInterpreter(const std::string& python, const std::string& package) {
    const std::vector<std::string> argv{python, "-c", "import ampbench"};
    Child child;
    try {
        child = spawn(argv, childEnvironment({}, package));
    } catch (const std::exception& e) {
        say(stderr, "%s\n", e.what());
        return false;
    }
    int status = 0;
    std::string err;
    char buf[4096];
    for (;;) {
        const ssize_t got = read(child.err_fd, buf, sizeof buf);
        if (got > 0) {
            err.append(buf, static_cast<size_t>(got));
            continue;
        }
        if (got < 0 && (errno == EAGAIN || errno == EINTR)) {
            pollfd p{child.err_fd, POLLIN, 0};
            poll(&p, 1, 200);
            continue;
        }
        break;
    }
    waitpid(child.pid, &status, 0);
    close(child.stream_fd);
    close(child.err_fd);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        return true;
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127 && err.find("cannot start") == 0) {
        say(stderr,
            "--python %s: %s (name the interpreter with --python or AMPBENCH_PYTHON; nothing was "
            "run)\n",
            python.c_str(), lastLine(err).c_str());
    } else {
        say(stderr,
            "%s cannot import the ampbench package (%s); it is installed with the workbench "
            "(/usr/lib/python3/dist-packages) or found in a checkout's python/ folder; nothing "
            "was run\n",
            python.c_str(), lastLine(err).c_str());
    }
    return false;
}

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

std::string pythonPackageDir() {
    const std::string exe = ownExecutable();
    if (exe.empty()) {
        return {};
    }
    std::error_code ec;
    const fs::path bin = fs::path(exe).parent_path();
    // An installed binary: <prefix>/bin next to <prefix>/lib/python3/dist-packages.
    const fs::path installed = bin.parent_path() / "lib" / "python3" / "dist-packages";
    if (fs::exists(installed / "ampbench" / "__init__.py", ec)) {
        return installed.string();
    }
    // A build tree inside a checkout: python/ in a folder above the binary.
    for (fs::path dir = bin; !dir.empty(); dir = dir.parent_path()) {
        if (fs::exists(dir / "python" / "ampbench" / "__init__.py", ec)) {
            return (dir / "python").string();
        }
        if (dir == dir.parent_path()) {
            break;
        }
    }
    return {};
}

int runScript(const std::string& db_path, const config::ValidSpec& given, const RunOverrides& o,
              std::FILE* stream) {
    const auto t0 = Clock::now();
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
    // The stored spec says that the script trained, and which (its arguments are in
    // each run's first event). Named for the script unless a name, a spec file or a
    // stored spec names it.
    config::ExperimentSpec named = given.spec();
    named.model.name = "script";
    named.model.file = script.string();
    if (o.name.empty() && o.config_file.empty() && !o.base) {
        named.name = fs::path(script_path).filename().string();
    }
    std::vector<config::FieldError> errors;
    std::optional<config::ValidSpec> renamed = config::ValidSpec::check(named, errors);
    const config::ValidSpec& valid = renamed ? *renamed : given;
    const config::ExperimentSpec& spec = valid.spec();
    struct stat st {};
    const char* script_problem = nullptr;
    if (::stat(script_path.c_str(), &st) != 0) {
        script_problem = errno == ENOENT ? "no such file" : std::strerror(errno);
    } else if (S_ISDIR(st.st_mode)) {
        script_problem = "is a folder, not a script";
    } else if (!S_ISREG(st.st_mode)) {
        script_problem = "is not a regular file";
    } else if (access(script_path.c_str(), R_OK) != 0) {
        script_problem = "cannot be read (permission denied)";
    }
    if (script_problem) {
        say(stderr, "--script %s: %s (nothing was run)\n",
            analysis::printable(script_path, false).c_str(), script_problem);
        return kDataMissing;
    }
    if (!(o.script_silence_s >= 0) || !std::isfinite(o.script_silence_s)) {
        say(stderr, "--script-silence %g: seconds from 0 (never) up\n", o.script_silence_s);
        return kUsage;
    }
    const std::string python = interpreter(o);
    const std::string package = pythonPackageDir();
    if (!checkInterpreter(python, package)) {
        return kDataMissing;
    }
    std::string device;
    try {
        device = train::resolveDevice(spec.device);
    } catch (const std::exception& e) {
        say(stderr, "device: %s (nothing was run)\n", e.what());
        return kUsage;
    }
    std::unique_ptr<store::Database> db;
    try {
        db = store::Database::open(db_path);
    } catch (const store::StoreError& e) {
        say(stderr, "%s\n", e.what());
        return kStoreError;
    }
    StreamTap tap(*db, stream);
    RunStreamer* const streamer = tap.streamer();
    train::ExperimentPlan plan;
    try {
        plan = train::planExperiment(*db, valid);
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
    const std::string env_json = probe::toJson(probe::probeEnvironment(device));
    if (streamer) {
        streamer->planned(env_json, plan.experiment_id);
    }
    std::vector<std::string> argv{python, script.string()};
    argv.insert(argv.end(), o.script_args.begin(), o.script_args.end());
    if (!o.quiet) {
        say(stderr, "experiment %lld '%s': %zu runs of %s on %s, recording to %s\n",
            static_cast<long long>(plan.experiment_id),
            analysis::printable(spec.name, false).c_str(), plan.runs.size(),
            analysis::printable(quoted(argv), false).c_str(), device.c_str(), db_path.c_str());
    }
    run::CancelToken cancel;
    auto interrupt = std::make_unique<InterruptScope>(cancel);
    Progress progress(static_cast<int>(plan.runs.size()), isatty(STDERR_FILENO) != 0, o.quiet);
    bool failed = false;
    int index = 0;
    for (const auto& r : plan.runs) {
        if (cancel.cancelled()) {
            break;
        }
        const auto row = db->run(r.run_id);
        const config::PlannedArm planned =
            config::plannedArmFromJson(row ? row->spec_json : std::string());
        store::RunRecorder recorder(*db, r.run_id);
        train::ObserverFanout sink({&recorder, &progress});
        progress.beginRun(index++, r.arm, r.seed, r.planned_steps);
        const auto vars = armVariables(spec, plan, r, planned, device);
        run::RunInfo info;
        info.arm = r.arm;
        info.precision = precisionOf(vars);
        info.device = device;
        info.seed = r.seed;
        info.planned_steps = r.planned_steps;
        info.micro_batch = spec.micro_batch;
        info.accumulation = planned.arm.accumulation;
        info.lr = planned.lr;
        info.env_json = env_json;
        const std::string who = "run " + std::to_string(r.run_id) + " (" + r.arm + ", seed " +
                                std::to_string(r.seed) + ")";
        run::RunOutcome outcome;
        const auto started = Clock::now();
        try {
            sink.onStart(info);
            sink.onEvent({0, run::EventKind::Info,
                          "trained by the script " + quoted(argv) +
                              " (AMPBENCH_PRECISION=" + info.precision +
                              "; the workbench records what the script reports and does not "
                              "change its dtypes)",
                          0.0});
            ScriptStream reader(r.run_id, sink, who);
            ScriptEnd end;
            try {
                const Child child = spawn(argv, childEnvironment(vars, package));
                end = runChild(child, reader, cancel, o.script_silence_s);
            } catch (const std::runtime_error& e) {
                end.exited = true;
                end.code = 127;
                end.stderr_tail = e.what();
            }
            if (end.recording_error.empty()) {
                reader.checkComplete();
            }
            outcome = judgeEnd(end, reader, o.script_silence_s);
            outcome.wall_s = std::chrono::duration<double>(Clock::now() - started).count();
            sink.onFinish(outcome);
        } catch (const std::exception& e) {
            outcome.status = run::RunStatus::Failed;
            outcome.record_error = e.what();
            say(stderr, "%s: %s\n", who.c_str(), e.what());
        }
        failed = failed || outcome.status != run::RunStatus::Finished;
        if (outcome.status == run::RunStatus::Cancelled) {
            break;
        }
    }
    interrupt.reset();
    if (cancel.cancelled()) {
        train::cancelQueued(*db, plan);
    }
    if (streamer) {
        streamer->closeExperiment(plan.experiment_id);
        db->setRecordListener(nullptr);
    }
    printResult(*db, spec, plan, device, db_path,
                std::chrono::duration<double>(Clock::now() - t0).count());
    if (cancel.cancelled()) {
        say(stderr, "cancelled: the rows recorded so far are kept\n");
        return kCancelled;
    }
    return failed ? kRunsFailed : kOk;
}

}  // namespace ampbench::cli
