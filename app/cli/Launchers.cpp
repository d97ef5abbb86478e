// `ampbench-cli launch` and `cancel`, and the registry of launchers: launcherFor is
// the one place a launcher is chosen, by the name `launch` was given (--slurm,
// --gridengine, ...) or the one its job file keeps. This machine's detached job is
// LocalLauncher.cpp; every scheduler's job array is ArrayLauncher.cpp over that
// scheduler's class (core/launch); `status` is StatusCommand.cpp.
#include <iostream>
#include <iterator>
#include <optional>

#include "cli/Commands.h"
#include "cli/ExitCodes.h"
#include "cli/JobFiles.h"
#include "cli/LaunchFlags.h"
#include "cli/Launcher.h"
#include "cli/ScriptRun.h"
#include "cli/Terminal.h"
#include "core/analysis/Format.h"
#include "core/config/SpecJson.h"
#include "core/config/Validation.h"
#include "core/launch/Scheduler.h"
#include "core/script/Trainers.h"

using nlohmann::json;

namespace ampbench::cli {

std::unique_ptr<Launcher> launcherFor(const std::string& scheduler) {
    if (scheduler.empty()) {
        return makeLocalLauncher();
    }
    if (const launch::Scheduler* s = launch::schedulerNamed(scheduler)) {
        return makeArrayLauncher(*s);
    }
    return nullptr;
}

namespace {

/// `launch --resume --experiment ID`: the launcher of the experiment's job starts its
/// collector again.
int resumeJob(const std::string& db_path, int64_t id, double wait_s) {
    std::optional<Job> job;
    try {
        if (checkJobsDir(db_path, false)) {
            job = readJob(jobFile(db_path, id), id);
        }
    } catch (const JobFileError& e) {
        say(stderr, "launch --resume: %s\n", e.what());
        return kIoError;
    }
    if (!job) {
        say(stderr,
            "launch --resume: no launched job for experiment %lld in %s (only experiments "
            "launched with %s have a collector to start again)\n",
            static_cast<long long>(id), db_path.c_str(), launch::schedulerFlags().c_str());
        return kNotFound;
    }
    return launcherFor(job->scheduler)->resume(db_path, *job, wait_s);
}

}  // namespace

int commandLaunch(const std::string& db_path, RunOverrides o, const LaunchOptions& given) {
    LaunchOptions l = given;
    if (!sortSchedulerFlags(l)) {
        return kUsage;
    }
    if (l.resume) {
        return resumeJob(db_path, l.experiment, l.wait_s);
    }
    if (l.config_stdin) {
        std::string text((std::istreambuf_iterator<char>(std::cin)),
                         std::istreambuf_iterator<char>());
        if (text.find_first_not_of(" \t\r\n") == std::string::npos) {
            say(stderr, "launch: --config-stdin read nothing (send the spec's JSON)\n");
            return kUsage;
        }
        std::vector<config::FieldError> errors;
        auto spec = config::specFromJsonText(text, errors);
        if (!errors.empty()) {
            config::renumberArmsAfterLeftOut(errors);
            printErrors("the spec on stdin has errors", errors, spec.arms);
            return kUsage;
        }
        o.base = spec;
    }
    const auto valid = buildSpec(o);
    if (!valid) {
        return kUsage;
    }
    const config::ExperimentSpec& spec = valid->spec();
    for (const auto& w : config::warnings(spec)) {
        say(stderr, "warning: %s\n",
            analysis::printable(config::describe(w, spec.arms), false).c_str());
    }
    if (!o.script.empty() || script::trainsWithScript(spec)) {  // the script is the model
        if (const launch::Scheduler* s = launch::schedulerNamed(l.scheduler)) {
            say(stderr,
                "launch --%s: a training script does not run as a %s task; `launch "
                "--script` trains it detached on this machine (on a cluster, inside an "
                "allocation such as salloc's), and `run --script` in the foreground; nothing "
                "was submitted\n",
                s->info().name.c_str(), s->info().title.c_str());
            return kUsage;
        }
        std::optional<config::ValidSpec> prepared;
        script::ScriptSettings settings;
        if (const int code = prepareScript(*valid, o, prepared, settings); code != kOk) {
            return code;
        }
        l.script = &settings;
        return launcherFor(l.scheduler)->launch(db_path, *prepared, l);
    }
    return launcherFor(l.scheduler)->launch(db_path, *valid, l);
}

int commandCancel(const std::string& db_path, int64_t experiment_id, double timeout_s) {
    const std::string path = jobFile(db_path, experiment_id);
    std::optional<Job> job;
    try {
        if (checkJobsDir(db_path, false)) {
            job = readJob(path, experiment_id);
        }
    } catch (const JobFileError& e) {
        say(stderr, "cancel: %s; nothing was signalled\n", e.what());
        return kIoError;
    }
    if (!job) {
        say(stderr,
            "cancel: no launched job for experiment %lld in %s (only experiments "
            "started with `launch` can be cancelled here)\n",
            static_cast<long long>(experiment_id), db_path.c_str());
        return kNotFound;
    }
    auto launcher = launcherFor(job->scheduler);
    return launcher->cancel(db_path, *job, timeout_s);
}

/// What became of an experiment: its job's process and its runs. A job file whose
/// process is gone means that runs left running were interrupted; a process that
/// is not the job (a reused pid, a file naming another program) tells nothing, and
/// the runs speak for themselves.
std::string jobState(JobProcess process, bool has_job, const std::vector<store::RunRow>& runs) {
    if (process == JobProcess::Ours) {
        return "running";
    }
    bool running = false, cancelled = false, failed = false, interrupted = false, queued = false;
    for (const auto& r : runs) {
        running |= r.status == run::RunStatus::Running;
        queued |= r.status == run::RunStatus::Queued;
        cancelled |= r.status == run::RunStatus::Cancelled;
        failed |= r.status == run::RunStatus::Failed;
        interrupted |= r.status == run::RunStatus::Interrupted;
    }
    if (has_job && process == JobProcess::Gone && (running || queued || interrupted)) {
        return "interrupted";  // its process is gone, its runs never ended
    }
    if (running || queued) {
        return "running";  // another process (`run`, the GUI) is training it
    }
    if (interrupted) {
        return "interrupted";
    }
    if (cancelled) {
        return "cancelled";
    }
    if (failed) {
        return "failed";
    }
    return "finished";
}

json runJson(const store::RunRow& r, bool job_dead) {
    std::string status = run::toString(r.status);
    if (job_dead && (r.status == run::RunStatus::Running)) {
        status = "interrupted";
    }
    return {{"id", r.id},       {"arm", r.arm},        {"seed", r.seed},
            {"status", status}, {"step", r.last_step}, {"planned_steps", r.planned_steps},
            {"error", r.error}};
}

}  // namespace ampbench::cli
