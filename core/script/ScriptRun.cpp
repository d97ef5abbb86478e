// A training script trains each planned run (ScriptRun.h): one process per run, its
// record stream read into the store, runs side by side where the spec packs them.
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
#include "core/config/Placement.h"
#include "core/config/PlannedArm.h"
#include "core/probe/Environment.h"
#include "core/run/SerialObserver.h"
#include "core/script/ScriptProcess.h"
#include "core/store/RunRecorder.h"
#include "core/train/Trainer.h"
#include "core/util/FileKind.h"
#include "core/util/OwnExecutable.h"
#include "core/util/Words.h"

#include "core/script/private/ScriptEnvironment.h"

namespace ampbench::script {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

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

std::unique_lock<std::mutex> lockOf(std::mutex* m) {
    return m ? std::unique_lock<std::mutex>(*m) : std::unique_lock<std::mutex>();
}

/// What a run that shared its device says of its figures.
std::string sharedWarning(const std::string& device, int runs_per_gpu) {
    const bool cuda = config::onCuda(device);
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
            Child child = spawn(c.argv, childEnvironment(vars, c.package));
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
    const bool cuda = config::onCuda(c.device);
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

int packedGpus(const config::ExperimentSpec& spec, const std::string& device, int visible_gpus) {
    if (!config::onCuda(device)) {
        return spec.runs_per_gpu > 1 ? 1 : 0;  // the CPU: runs_per_gpu scripts at a time
    }
    const int visible = std::max(1, visible_gpus);
    const int gpus = spec.gpus > 0 ? std::min(spec.gpus, visible) : visible;
    return gpus > 1 || spec.runs_per_gpu > 1 ? gpus : 0;
}

namespace {

/// runScriptExperiment once the file is known intact.
train::ExperimentResult runOnIntactFile(store::Database& db, const config::ValidSpec& valid,
                                        const run::CancelToken& cancel,
                                        const train::ExperimentHooks& hooks,
                                        const ScriptSettings& settings, int64_t rerun_of) {
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

}  // namespace

train::ExperimentResult runScriptExperiment(store::Database& db, const config::ValidSpec& valid,
                                            const run::CancelToken& cancel,
                                            const train::ExperimentHooks& hooks,
                                            const ScriptSettings& settings, int64_t rerun_of) {
    db.requireIntact();  // nothing is added to a damaged file
    return runOnIntactFile(db, valid, cancel, hooks, settings, rerun_of);
}

train::ExperimentResult runScriptExperiment(store::Database& db, const config::ExperimentSpec& spec,
                                            const run::CancelToken& cancel,
                                            const train::ExperimentHooks& hooks,
                                            const ScriptSettings& settings) {
    db.requireIntact();  // a damaged file is named before the spec's problems
    return runOnIntactFile(db, train::validSpec(spec), cancel, hooks, settings, 0);
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
    t.device->cuda = config::onCuda(settings.device);
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
