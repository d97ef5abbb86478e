// A training script trains each planned run (ScriptRun.h).
#include "core/script/ScriptRun.h"

#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "core/analysis/Format.h"
#include "core/config/PlannedArm.h"
#include "core/probe/Environment.h"
#include "core/run/SerialObserver.h"
#include "core/script/ScriptProcess.h"
#include "core/store/RunRecorder.h"
#include "core/train/Trainer.h"
#include "core/util/FileKind.h"
#include "core/util/OwnExecutable.h"
#include "core/util/Words.h"

extern char** environ;

namespace ampbench::script {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

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
        {"AMPBENCH_MICRO_BATCH", std::to_string(config::microBatchOf(spec, arm))},
        {"AMPBENCH_EFFECTIVE_BATCH", std::to_string(planned.effective_batch)},
        {"AMPBENCH_PLANNED_STEPS", std::to_string(r.planned_steps)},
        {"AMPBENCH_MICRO_STEPS", std::to_string(config::armMicroSteps(spec, arm))},
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

/// What every run of one experiment shares.
struct Context {
    const config::ExperimentSpec& spec;
    const train::ExperimentPlan& plan;
    const ScriptSettings& settings;
    std::vector<std::string> argv;
    std::string package;
    std::string device;
    std::string env_json;
};

/// Where one run trains: its device and environment, and, when runs train at once,
/// the lock they share the database connection through (the front end's observer is
/// serialised by train::trainSideBySide) and whether another run held its GPU (or the
/// CPU) while it trained.
struct Slot {
    std::string device;
    std::string env_json;
    std::mutex* lock = nullptr;
    std::function<bool()> shared;
};

void say(const ScriptSettings& s, const std::string& line) {
    if (s.say) {
        s.say(line);
    }
}

std::unique_lock<std::mutex> lockOf(std::mutex* m) {
    return m ? std::unique_lock<std::mutex>(*m) : std::unique_lock<std::mutex>();
}

/// What a run that shared its device says of its figures.
std::string sharedWarning(const std::string& device, int runs_per_gpu) {
    const bool cuda = device.rfind("cuda", 0) == 0;
    return cuda ? "this run shared its GPU (" + device +
                      ") with other script runs for part of its time (runs_per_gpu " +
                      std::to_string(runs_per_gpu) +
                      "): its step times and memory are not the GPU's alone"
                : "this run shared the CPU with other script runs for part of its time "
                  "(runs_per_gpu " +
                      std::to_string(runs_per_gpu) +
                      "): its step times are not the CPU's alone (its memory is its own "
                      "process's)";
}

/// Trains one planned run with the script, recording into `db` (and telling `extra`).
run::RunOutcome trainOne(store::Database& db, const Context& c, const train::PlannedRun& r,
                         const run::CancelToken& cancel, run::TrainObserver* extra,
                         const Slot& slot) {
    const std::string who =
        "run " + std::to_string(r.run_id) + " (" + r.arm + ", seed " + std::to_string(r.seed) + ")";
    run::RunOutcome outcome;
    const auto started = Clock::now();
    std::optional<store::RunRecorder> recorder;
    try {
        config::PlannedArm planned;
        {
            auto lock = lockOf(slot.lock);
            const auto row = db.run(r.run_id);
            planned = config::plannedArmFromJson(row ? row->spec_json : std::string());
            recorder.emplace(db, r.run_id);
        }
        std::vector<run::TrainObserver*> targets{&*recorder};
        if (extra) {
            targets.push_back(extra);
        }
        train::ObserverFanout fanout(targets);
        run::SerialObserver sink(fanout, slot.lock);
        const auto vars = armVariables(c.spec, c.plan, r, planned, slot.device);
        run::RunInfo info;
        info.arm = r.arm;
        info.precision = precisionOf(vars);
        info.device = slot.device;
        info.seed = r.seed;
        info.planned_steps = r.planned_steps;
        info.micro_batch = config::microBatchOf(c.spec, planned.arm);
        info.accumulation = planned.arm.accumulation;
        info.lr = planned.lr;
        info.env_json = slot.env_json;
        sink.onStart(info);
        sink.onEvent({0, run::EventKind::Info,
                      "trained by the script " + util::joinWords(c.argv) +
                          " (AMPBENCH_PRECISION=" + info.precision +
                          "; the workbench records what the script reports and does not "
                          "change its dtypes)",
                      0.0});
        ScriptStream reader(r.run_id, sink, who, c.settings.say);
        ScriptEnd end;
        try {
            const Child child = spawn(c.argv, childEnvironment(vars, c.package));
            end = runChild(child, reader, cancel, c.settings.silence_s);
        } catch (const std::runtime_error& e) {
            end.exited = true;
            end.code = 127;
            end.stderr_tail = e.what();
        }
        if (end.recording_error.empty()) {
            reader.checkComplete();
        }
        outcome = judgeEnd(end, reader, c.settings.silence_s);
        outcome.wall_s = std::chrono::duration<double>(Clock::now() - started).count();
        if (slot.shared && slot.shared() && end.recording_error.empty()) {
            sink.onEvent({reader.lastStep(), run::EventKind::Warning,
                          sharedWarning(slot.device, c.spec.runs_per_gpu), 0.0});
        }
        sink.onFinish(outcome);
    } catch (const std::exception& e) {  // the run's row could not be read, taken or recorded
        outcome.status = run::RunStatus::Failed;
        outcome.failure = run::FailureKind::Recording;
        outcome.error = e.what();
        outcome.record_error = e.what();
        say(c.settings, who + ": " + e.what());
    }
    auto lock = lockOf(slot.lock);
    recorder.reset();  // what it still holds is written through the shared connection
    return outcome;
}

/// Runs of the experiment at once: `runs_per_gpu` script processes on each of `gpus`
/// GPUs (one slot group for the CPU), each on a thread of its own that starts its
/// script and reads its stream, in plan order (train::trainSideBySide). One
/// connection, one lock: the recorders write through `db` one at a time, as
/// `run --stream` listens to it.
void trainPacked(store::Database& db, const Context& c, const run::CancelToken& cancel,
                 const train::ExperimentHooks& hooks, int gpus, train::ExperimentResult& result) {
    const bool cuda = c.device.rfind("cuda", 0) == 0;
    std::mutex db_lock;  // guards db: the one connection the runs' threads record through
    std::mutex probes;   // guards environments: each GPU is probed once, by the first run on it
    std::map<int, std::string> environments;
    train::SideBySide places;
    places.gpus = gpus;
    places.runs_per_gpu = c.spec.runs_per_gpu;
    places.db_lock = &db_lock;
    train::trainSideBySide(
        db, cancel, hooks, places,
        [&](const train::PlannedRun& run, int gpu, const run::CancelToken& run_cancel,
            run::TrainObserver* extra, const std::function<bool()>& shared_device) {
            // One GPU keeps the device as resolved; over several, each run names its own.
            std::string device = cuda && gpus > 1 ? "cuda:" + std::to_string(gpu) : c.device;
            std::string env_json;
            {
                std::lock_guard<std::mutex> lock(probes);
                auto it = environments.find(gpu);
                if (it == environments.end()) {
                    it = environments
                             .emplace(gpu, device != c.device
                                               ? probe::toJson(probe::probeEnvironment(device))
                                               : c.env_json)
                             .first;
                }
                env_json = it->second;
            }
            const Slot slot{std::move(device), std::move(env_json), &db_lock, shared_device};
            return trainOne(db, c, run, run_cancel, extra, slot);
        },
        result);
}

}  // namespace

std::string interpreterFor(const config::ModelSpec& model, const std::string& given) {
    if (!given.empty()) {
        return given;
    }
    if (!model.python.empty()) {
        return model.python;
    }
    const char* env = std::getenv("AMPBENCH_PYTHON");
    return env && *env ? env : "python3";
}

std::vector<std::string> commandLine(const config::ModelSpec& model, const std::string& python) {
    std::string error;
    const auto words = util::splitWords(model.args, error);
    if (!words) {
        throw std::invalid_argument("model.args: " + error);
    }
    std::error_code ec;
    const fs::path script = fs::absolute(model.file, ec);
    std::vector<std::string> argv{python, ec ? model.file : script.string()};
    argv.insert(argv.end(), words->begin(), words->end());
    return argv;
}

std::string scriptFileProblem(const std::string& path) {
    if (path.empty()) {
        return "no script named";
    }
    const util::FileKind kind = util::fileKind(path);
    if (kind == util::FileKind::Missing) {
        return "no such file";
    }
    if (kind != util::FileKind::Regular) {
        return "is " + util::describeFileKind(kind) + ", not a script";
    }
    if (access(path.c_str(), R_OK) != 0) {
        return "cannot be read (permission denied)";
    }
    return {};
}

namespace {

/// Imports ampbench and torch and looks the other modules up, as a script run started
/// in `folder` would find them; prints each one it cannot have on stderr. Its argv:
/// -c, the folder (may be empty), the modules.
constexpr const char* kImportProbe = R"(import importlib, importlib.util, sys
sys.argv.pop(0)
folder = sys.argv.pop(0)
if folder:
    sys.path.insert(0, folder)
for name in sys.argv:
    try:
        if name in ("ampbench", "torch"):
            importlib.import_module(name)
        elif importlib.util.find_spec(name) is None:
            raise ModuleNotFoundError("No module named %r" % name)
    except BaseException as e:
        text = (str(e).splitlines() or [""])[0]
        sys.stderr.write("ampbench-missing\t%s\t%s: %s\n" % (name, type(e).__name__, text))
)";

constexpr const char* kMissingTag = "ampbench-missing\t";

bool isIdentifier(const std::string& s) {
    if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) {
        return false;
    }
    return std::all_of(s.begin(), s.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
    });
}

std::string trimmed(const std::string& s) {
    const size_t b = s.find_first_not_of(" \t\r");
    if (b == std::string::npos) {
        return {};
    }
    return s.substr(b, s.find_last_not_of(" \t\r") + 1 - b);
}

/// The top-level package of a dotted name ("torch" of "torch.nn as nn"); empty for a
/// relative one or __future__.
std::string topLevel(const std::string& spec) {
    const std::string t = trimmed(spec);
    const std::string word = t.substr(0, t.find_first_of(" \t("));
    const std::string top = word.substr(0, word.find('.'));
    return isIdentifier(top) && top != "__future__" ? top : std::string();
}

/// The names one file's unindented import lines give.
std::vector<std::string> importsOf(const fs::path& path) {
    std::ifstream in(path);
    std::vector<std::string> out;
    std::string line;
    bool in_string = false;  // inside a triple-quoted string
    while (std::getline(in, line)) {
        while (!line.empty() && line.back() == '\\') {  // a continued line
            std::string more;
            line.pop_back();
            if (!std::getline(in, more)) {
                break;
            }
            line += " " + more;
        }
        size_t quotes = 0;
        for (const char* q : {"\"\"\"", "'''"}) {
            for (size_t at = line.find(q); at != std::string::npos; at = line.find(q, at + 3)) {
                ++quotes;
            }
        }
        const bool was_in_string = in_string;
        in_string = in_string != (quotes % 2 == 1);
        if (was_in_string) {
            continue;
        }
        const std::string code = line.substr(0, line.find('#'));
        if (code.rfind("import ", 0) == 0) {
            std::stringstream names(code.substr(7));
            for (std::string part; std::getline(names, part, ',');) {
                if (const std::string top = topLevel(part); !top.empty()) {
                    out.push_back(top);
                }
            }
        } else if (code.rfind("from ", 0) == 0 && code.find(" import") != std::string::npos) {
            if (const std::string top = topLevel(code.substr(5)); !top.empty()) {
                out.push_back(top);
            }
        }
    }
    return out;
}

}  // namespace

std::vector<std::string> scriptImports(const std::string& path) {
    std::vector<std::string> out;
    auto add = [&out](const std::vector<std::string>& names) {
        for (const auto& n : names) {
            if (std::find(out.begin(), out.end(), n) == out.end()) {
                out.push_back(n);
            }
        }
    };
    const std::vector<std::string> own = importsOf(path);
    add(own);
    const fs::path folder = fs::path(path).parent_path();
    std::error_code ec;
    for (const auto& name : own) {
        for (const fs::path& beside : {folder / (name + ".py"), folder / name / "__init__.py"}) {
            if (fs::is_regular_file(beside, ec)) {
                add(importsOf(beside));
            }
        }
    }
    return out;
}

InterpreterCheck checkInterpreter(const std::string& python, const std::string& package,
                                  const std::vector<std::string>& modules, double timeout_s,
                                  const std::string& folder) {
    InterpreterCheck out;
    std::vector<std::string> argv{python, "-c", kImportProbe, folder, "ampbench"};
    for (const auto& m : modules) {
        if (m != "ampbench") {
            argv.push_back(m);
        }
    }
    Child child;
    try {
        child = spawn(argv, childEnvironment({}, package));
    } catch (const std::exception& e) {
        out.cannot_start = true;
        out.detail = e.what();
        return out;
    }
    const auto deadline =
        Clock::now() + std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000));
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
            const auto left =
                std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
            if (left.count() <= 0) {
                out.timed_out = true;
                kill(-child.pid, SIGKILL);
                break;
            }
            pollfd p{child.err_fd, POLLIN, 0};
            poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), 200)));
            continue;
        }
        break;
    }
    while (waitpid(child.pid, &status, 0) < 0 && errno == EINTR) {
    }
    close(child.stream_fd);
    close(child.err_fd);
    std::string said;  // what it printed besides the probe's lines
    std::stringstream lines(err);
    for (std::string line; std::getline(lines, line);) {
        if (line.rfind(kMissingTag, 0) == 0) {
            const std::string rest = line.substr(std::strlen(kMissingTag));
            const size_t tab = rest.find('\t');
            out.missing.push_back(
                {rest.substr(0, tab), tab == std::string::npos ? "" : rest.substr(tab + 1)});
        } else {
            said += line + "\n";
        }
    }
    out.detail = lastLine(said);
    if (out.timed_out) {
        out.missing.clear();
        return out;
    }
    const bool exited_ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    out.cannot_start = !exited_ok && WIFEXITED(status) && WEXITSTATUS(status) == 127 &&
                       err.find("cannot start") == 0;
    if (!exited_ok && !out.cannot_start && out.missing.empty()) {
        // It started and failed before the probe could say what: nothing imports.
        const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        out.missing.push_back({"ampbench", out.detail.empty()
                                               ? "exited with status " + std::to_string(code)
                                               : out.detail});
    }
    out.ok = exited_ok && out.missing.empty();
    return out;
}

train::SetupReport checkScriptSetup(const config::ExperimentSpec& spec,
                                    const ScriptSettings& settings) {
    using Kind = train::SetupProblem::Kind;
    train::SetupReport r;
    const std::string python = interpreterFor(spec.model, settings.python);
    const std::string file = fs::path(spec.model.file).filename().string();
    r.model = "training script " + (file.empty() ? spec.model.file : file) + ", run by " + python;
    try {
        r.device = settings.device.empty() ? train::resolveDevice(spec.device) : settings.device;
    } catch (const std::exception& e) {
        r.problems.push_back({Kind::Mismatch, "device", e.what()});
    }
    for (size_t i = 0; i < spec.arms.size(); ++i) {
        if (spec.arms[i].ranks > 1) {
            r.problems.push_back(
                {Kind::Mismatch, "arms[" + std::to_string(i) + "].ranks",
                 "a script trains in one process; data-parallel arms are for the built-in "
                 "models"});
        }
    }
    if (const std::string why = scriptFileProblem(spec.model.file); !why.empty()) {
        r.problems.push_back({Kind::Unreadable, "model.file", spec.model.file + ": " + why});
    }
    std::string error;
    if (!util::splitWords(spec.model.args, error)) {
        r.problems.push_back({Kind::Mismatch, "model.args", error});
    }
    const std::string package = settings.package.empty() ? pythonPackageDir() : settings.package;
    std::error_code ec;
    const std::string folder = spec.model.file.empty()
                                   ? std::string()
                                   : fs::absolute(spec.model.file, ec).parent_path().string();
    const std::vector<std::string> modules = scriptImports(spec.model.file);
    const InterpreterCheck check =
        checkInterpreter(python, package, modules, settings.import_timeout_s, folder);
    const std::string script_name = file.empty() ? std::string("the script") : file;
    if (check.cannot_start) {
        r.problems.push_back({Kind::Unreadable, "model.python",
                              python + ": " + check.detail +
                                  " (name the Python interpreter, e.g. /usr/bin/python3)"});
    } else if (check.timed_out) {
        r.problems.push_back(
            {Kind::Mismatch, "model.python",
             python + " did not finish importing ampbench" +
                 (modules.empty() ? std::string()
                                  : " and the modules " + script_name + " imports") +
                 " within " + analysis::formatNumber(settings.import_timeout_s, 0) +
                 " s; check that it starts from a shell (" + python + " -c 'import torch')"});
    }
    for (const auto& m : check.missing) {
        const std::string said = m.error.empty() ? std::string() : " (" + m.error + ")";
        if (m.module == "ampbench") {
            r.problems.push_back(
                {Kind::Mismatch, "model.python",
                 python + " cannot import the ampbench package" + said +
                     (package.empty()
                          ? "; no python/ folder with it was found beside the workbench: it is "
                            "installed with the workbench (/usr/lib/python3/dist-packages), or "
                            "put a checkout's python/ folder on PYTHONPATH"
                          : "; the workbench puts " + package +
                                " first on the script's PYTHONPATH for it, and that folder "
                                "lacks ampbench/__init__.py")});
        } else if (m.module == "torch") {
            r.problems.push_back(
                {Kind::Mismatch, "model.python",
                 python + " cannot import torch, which " + script_name + " imports" + said +
                     ": install PyTorch for this interpreter (on Debian: apt install "
                     "python3-torch) or name one that has it in model.python"});
        } else {
            r.problems.push_back(
                {Kind::Mismatch, "model.python",
                 python + " cannot import " + m.module + ", which " + script_name + " imports" +
                     said + ": install it for this interpreter (on Debian often python3-" +
                     m.module + ", else pip install " + m.module +
                     ") or name one that has it in model.python"});
        }
    }
    if (r.ok()) {
        const auto has = [&modules](const char* name) {
            return std::find(modules.begin(), modules.end(), name) != modules.end();
        };
        const size_t others = modules.size() - (has("torch") ? 1 : 0) - (has("ampbench") ? 1 : 0);
        r.model += std::string(has("torch") ? ", which imports torch and ampbench"
                                            : ", which imports ampbench") +
                   (others > 0 ? " and finds the " + std::to_string(others) +
                                     " other modules the script imports"
                               : std::string());
    }
    return r;
}

int packedGpus(const config::ExperimentSpec& spec, const std::string& device, int visible_gpus) {
    if (device.rfind("cuda", 0) != 0) {
        return spec.runs_per_gpu > 1 ? 1 : 0;  // the CPU: runs_per_gpu scripts at a time
    }
    const int visible = std::max(1, visible_gpus);
    const int gpus = spec.gpus > 0 ? std::min(spec.gpus, visible) : visible;
    return gpus > 1 || spec.runs_per_gpu > 1 ? gpus : 0;
}

std::string pythonPackageDir() {
    const fs::path exe = util::ownExecutable();
    if (exe.empty()) {
        return {};
    }
    std::error_code ec;
    const fs::path bin = exe.parent_path();
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

train::ExperimentResult runScriptExperiment(store::Database& db, const config::ValidSpec& valid,
                                            const run::CancelToken& cancel,
                                            const train::ExperimentHooks& hooks,
                                            const ScriptSettings& settings, int64_t rerun_of) {
    db.requireIntact();  // nothing is added to a damaged file
    const config::ExperimentSpec& spec = valid.spec();
    if (!hooks.setup_checked) {
        train::SetupReport report = checkScriptSetup(spec, settings);
        if (!report.ok()) {
            throw train::SetupError(std::move(report));
        }
    }
    train::ExperimentPlan plan = train::planExperiment(db, valid, rerun_of);
    if (hooks.planned) {
        hooks.planned(plan);
    }
    return trainScriptRuns(db, valid, std::move(plan), cancel, hooks, settings);
}

train::ExperimentResult trainScriptRuns(store::Database& db, const config::ValidSpec& valid,
                                        train::ExperimentPlan plan, const run::CancelToken& cancel,
                                        const train::ExperimentHooks& hooks,
                                        const ScriptSettings& settings) {
    const config::ExperimentSpec& spec = valid.spec();
    const std::string python = interpreterFor(spec.model, settings.python);
    const std::string package = settings.package.empty() ? pythonPackageDir() : settings.package;
    const std::string device =
        settings.device.empty() ? train::resolveDevice(spec.device) : settings.device;
    const std::string env_json = settings.environment_json.empty()
                                     ? probe::toJson(probe::probeEnvironment(device))
                                     : settings.environment_json;
    std::vector<std::string> argv = commandLine(spec.model, python);
    train::ExperimentResult result;
    result.plan = std::move(plan);
    const Context context{spec, result.plan, settings, std::move(argv), package, device, env_json};
    if (const int gpus = packedGpus(spec, device, settings.gpus); gpus > 0) {
        trainPacked(db, context, cancel, hooks, gpus, result);  // side by side
    } else {
        const Slot alone{device, env_json, nullptr, {}};
        train::trainOneAtATime(
            db, cancel, hooks,
            [&](const train::PlannedRun& run, const run::CancelToken& c,
                run::TrainObserver* extra) { return trainOne(db, context, run, c, extra, alone); },
            result);
    }
    if (result.cancelled || cancel.cancelled()) {
        result.cancelled = true;
        train::cancelQueued(db, result.plan);
    }
    return result;
}

train::AdviseTrainer scriptAdviseTrainer(store::Database& db, const ScriptSettings& settings) {
    train::AdviseTrainer t;
    t.searches = false;
    t.device = config::AdviceDevice{};  // the script's own PyTorch decides, in its pass
    t.device->cuda = !settings.device.empty() && settings.device.rfind("cuda", 0) == 0;
    t.pass = [&db, settings](const config::ExperimentSpec& spec, const train::PlannedRun& run,
                             const run::CancelToken& cancel, run::TrainObserver* observer) {
        train::ExperimentPlan plan;
        plan.runs = {run};
        if (const auto row = db.run(run.run_id)) {
            plan.experiment_id = row->experiment_id;  // AMPBENCH_EXPERIMENT_ID
        }
        train::ExperimentHooks hooks;
        hooks.starting = [observer](const train::PlannedRun&) { return observer; };
        run::RunOutcome outcome;
        outcome.status = run::RunStatus::Cancelled;
        hooks.finished = [&outcome](const train::PlannedRun&, const run::RunOutcome& o) {
            outcome = o;
        };
        trainScriptRuns(db, train::validSpec(spec), std::move(plan), cancel, hooks, settings);
        return outcome;
    };
    t.quality = [&db, settings](const config::ValidSpec& spec, train::ExperimentPlan plan,
                                const run::CancelToken& cancel, const train::ExperimentHooks& h) {
        return trainScriptRuns(db, spec, std::move(plan), cancel, h, settings);
    };
    return t;
}

}  // namespace ampbench::script
