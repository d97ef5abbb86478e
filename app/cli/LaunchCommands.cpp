// `ampbench-cli launch`, `status`, `cancel` and `host`: experiments that run detached on
// this machine (a GPU server reached over SSH), and what a desktop needs to know of it.
//
// A launched job is one process (setsid, double fork: it outlives the SSH session)
// that trains into the database exactly as `run` does. Beside the database, in
// <db>.jobs/ (mode 0700, this user's own), it leaves <experiment>.json (pid, its
// start time, log, exit code), <experiment>.log (its stdout and stderr) and
// <experiment>.lock, which it holds locked while it runs: `cancel` signals only
// the process that holds it. Every file there is created exclusively, mode 0600,
// never through a link.
#include <fcntl.h>
#include <poll.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "cli/Commands.h"
#include "cli/Detach.h"
#include "cli/ExitCodes.h"
#include "cli/Interrupt.h"
#include "cli/JobFiles.h"
#include "cli/Launcher.h"
#include "cli/OpenDatabase.h"
#include "cli/Progress.h"
#include "cli/ScriptRun.h"
#include "cli/Slurm.h"
#include "cli/Terminal.h"
#include "core/analysis/Format.h"
#include "core/config/BuildInfo.h"
#include "core/config/SpecJson.h"
#include "core/config/Validation.h"
#include "core/probe/Environment.h"
#include "core/store/Database.h"
#include "core/store/OutputFile.h"
#include "core/train/Experiment.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace ampbench::cli {
namespace {

/// The detached job: trains `spec` into the database with its output in the log, with
/// the built-in trainer or, given `script` (checked by prepareScript), the user's
/// training script. Tells the launcher on `report` ("planned ID" or "failed CODE") and
/// closes it.
int runJob(const std::string& db_path, const config::ValidSpec& valid,
           const std::string& pending_log, int report, const script::ScriptSettings* script) {
    const config::ExperimentSpec& spec = valid.spec();
    auto fail = [&](int code) {
        if (report >= 0) {
            writeAll(report, "failed " + std::to_string(code) + "\n");
            ::close(report);
            report = -1;
        }
        return code;
    };
    std::string device;
    if (script) {
        device = script->device;  // the script, its interpreter and the device: checked
    } else if (int code = preflight(spec, device, false); code != kOk) {
        return fail(code);
    }
    std::unique_ptr<store::Database> db = openOrSay(db_path);
    if (!db) {
        return fail(kStoreError);
    }
    run::CancelToken cancel;
    InterruptScope interrupt(cancel);
    std::optional<Job> job;
    std::unique_ptr<Progress> progress;
    train::ExperimentHooks hooks;
    hooks.setup_checked = true;
    hooks.planned = [&](const train::ExperimentPlan& plan) {
        const std::string log = jobLogFile(db_path, plan.experiment_id);
        std::error_code ec;
        fs::rename(pending_log, log, ec);  // the open descriptor keeps writing to it
        job = Job{};
        job->experiment_id = plan.experiment_id;
        job->pid = ::getpid();
        job->pid_start = processStart(::getpid());
        job->log = ec ? pending_log : log;
        job->db = db_path;
        job->device = device;
        job->runs = static_cast<int64_t>(plan.runs.size());
        job->started_at = static_cast<int64_t>(std::time(nullptr));
        try {
            holdJobLock(db_path, plan.experiment_id);  // before the file that names this pid
            writeJob(db_path, *job);
        } catch (const JobFileError& e) {
            say(stderr, "%s\n", e.what());
        }
        say(stderr, "experiment %lld '%s': %zu runs on %s%s, recording to %s\n",
            static_cast<long long>(plan.experiment_id),
            analysis::printable(spec.name, false).c_str(), plan.runs.size(), device.c_str(),
            script ? packingText(spec, *script).c_str() : "", db_path.c_str());
        progress = std::make_unique<Progress>(static_cast<int>(plan.runs.size()), false, false);
        if (report >= 0) {
            writeAll(report, "planned " + std::to_string(plan.experiment_id) + "\n");
            ::close(report);
            report = -1;
        }
    };
    int index = 0;
    hooks.starting = [&](const train::PlannedRun& run) -> run::TrainObserver* {
        return progress->beginRun(index++, run.arm, run.seed, run.planned_steps);
    };
    // A killed script ends its run interrupted, not failed: the job did not succeed.
    bool unfinished = false;
    hooks.finished = [&](const train::PlannedRun&, const run::RunOutcome& outcome) {
        unfinished = unfinished || outcome.status != run::RunStatus::Finished;
    };
    train::ExperimentResult result;
    int code = kOk;
    try {
        result = script ? script::runScriptExperiment(*db, valid, cancel, hooks, *script)
                        : train::runExperiment(*db, valid, cancel, hooks);
        code = cancel.cancelled()                ? kCancelled
               : result.any_failed || unfinished ? kRunsFailed
                                                 : kOk;
    } catch (const store::StoreError& e) {
        say(stderr, "%s\n", e.what());
        code = kStoreError;
    } catch (const std::exception& e) {
        say(stderr, "%s\n", e.what());
        code = kUsage;
    }
    if (!job) {
        return fail(code);
    }
    for (const auto& r : db->runs(result.plan.experiment_id)) {
        say(stderr, "run %lld %s seed %llu: %s at step %lld%s%s\n", static_cast<long long>(r.id),
            r.arm.c_str(), static_cast<unsigned long long>(r.seed), run::toString(r.status).c_str(),
            static_cast<long long>(r.last_step), r.error.empty() ? "" : ": ",
            analysis::printable(r.error, false).c_str());
    }
    if (code != kCancelled) {
        printVerdicts(*db, result.plan.experiment_id);
    }
    job->exit_code = code;
    job->ended_at = static_cast<int64_t>(std::time(nullptr));
    try {
        writeJob(db_path, *job);
    } catch (const std::exception& e) {
        say(stderr, "%s\n", e.what());
    }
    std::fflush(stdout);
    std::fflush(stderr);
    return code;
}

}  // namespace

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

namespace {

/// Starts the detached job on this machine; with `script` the user's training script
/// trains the runs (LocalLauncher's launch for a spec whose model is "script").
int launchHere(const std::string& db_path, const config::ValidSpec& valid, const LaunchOptions& l,
               const script::ScriptSettings* script);

/// This machine: the experiment trains in one detached process (setsid, double fork).
class LocalLauncher final : public Launcher {
  public:
    int launch(const std::string& db_path, const config::ValidSpec& valid,
               const LaunchOptions& l) override;
    json describe(const std::string&, const Job* job,
                  const std::vector<store::RunRow>& runs) override;
    int cancel(const std::string& db_path, const Job& job, double timeout_s) override;
};

}  // namespace

std::unique_ptr<Launcher> makeLocalLauncher() {
    return std::make_unique<LocalLauncher>();
}

std::unique_ptr<Launcher> launcherFor(const std::string& scheduler) {
    if (scheduler.empty()) {
        return makeLocalLauncher();
    }
    if (scheduler == "slurm") {
        return makeSlurmLauncher();
    }
    return nullptr;
}

int commandLaunch(const std::string& db_path, RunOverrides o, const LaunchOptions& l) {
    if (l.resume) {
        return resumeCollector(db_path, l.experiment, l.wait_s);
    }
    if (!l.slurm && (!l.partition.empty() || l.gpus_per_task > 0 || !l.time_limit.empty() ||
                     !l.sbatch_options.empty())) {
        say(stderr,
            "launch: --partition, --gpus-per-task, --time-limit and --sbatch-option are "
            "Slurm's: add --slurm\n");
        return kUsage;
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
    if (!o.script.empty() || spec.model.name == "script") {  // the script is the model
        if (l.slurm) {
            say(stderr,
                "launch --slurm: a training script does not run as a Slurm task; `launch "
                "--script` trains it detached on this machine (on a cluster, inside an "
                "allocation such as salloc's), and `run --script` in the foreground; nothing "
                "was submitted\n");
            return kUsage;
        }
        std::optional<config::ValidSpec> prepared;
        script::ScriptSettings settings;
        if (const int code = prepareScript(*valid, o, prepared, settings); code != kOk) {
            return code;
        }
        return launchHere(db_path, *prepared, l, &settings);
    }
    return (l.slurm ? makeSlurmLauncher() : makeLocalLauncher())->launch(db_path, *valid, l);
}

int LocalLauncher::launch(const std::string& db_path, const config::ValidSpec& valid,
                          const LaunchOptions& l) {
    return launchHere(db_path, valid, l, nullptr);
}

namespace {

int launchHere(const std::string& db_path, const config::ValidSpec& valid, const LaunchOptions& l,
               const script::ScriptSettings* script) {
    try {
        store::Database::open(db_path);  // a file we cannot write fails here, not in the log
    } catch (const store::StoreError& e) {
        say(stderr, "%s\n", e.what());
        return kStoreError;
    }
    try {
        checkJobsDir(db_path, true);
    } catch (const JobFileError& e) {
        say(stderr, "launch: %s\n", e.what());
        return kIoError;
    }
    std::error_code ec;
    const std::string pending = pendingLogFile(db_path, ::getpid());
    const int log = createLog(pending);
    if (log < 0) {
        say(stderr, "launch: cannot create the job's log %s: %s\n", pending.c_str(),
            std::strerror(errno));
        return kIoError;
    }
    // The job says "pid N", then "planned ID" or "failed CODE"; the pipe closing
    // before either means that it died.
    auto verdictOf = [](const std::string& said) -> std::string {
        std::istringstream lines(said);
        std::string line;
        while (std::getline(lines, line)) {
            if (lines.good() && (line.rfind("planned ", 0) == 0 || line.rfind("failed ", 0) == 0)) {
                return line;
            }
        }
        return {};
    };
    const DetachedStart start = startDetached(
        log,
        [&](int report) {
            writeAll(report, "pid " + std::to_string(::getpid()) + "\n");
            return runJob(db_path, valid, pending, report, script);
        },
        l.wait_s, [&](const std::string& said) { return !verdictOf(said).empty(); });
    if (!start.started) {
        say(stderr, "launch: %s\n", start.error.c_str());
        return kIoError;
    }
    const std::string& said = start.said;
    const bool timed_out = start.timed_out;
    const pid_t job_pid = said.rfind("pid ", 0) == 0 ? std::atoi(said.c_str() + 4) : 0;
    const std::string line = verdictOf(said);
    if (line.rfind("planned ", 0) == 0) {
        const int64_t id = std::atoll(line.c_str() + 8);
        std::optional<Job> job;
        std::string problem;
        try {
            job = readJob(jobFile(db_path, id), id);
        } catch (const JobFileError& e) {
            problem = std::string(": ") + e.what();
        }
        if (!job) {
            say(stderr, "launch: experiment %lld was planned but %s cannot be read%s\n",
                static_cast<long long>(id), jobFile(db_path, id).c_str(), problem.c_str());
            return kIoError;
        }
        json line = {{"experiment_id", id},
                     {"pid", static_cast<int>(job->pid)},
                     {"log", job->log},
                     {"runs", job->runs},
                     {"version", config::buildVersion()}};
        printJson(line);
        return kOk;
    }
    const std::string output = readText(pending);
    if (timed_out) {
        say(stderr,
            "launch: the job did not plan its experiment within %.0f s (checking the "
            "model and data); it was stopped. Its output so far (%s):\n%s",
            l.wait_s, pending.c_str(), output.c_str());
        // Nothing is recorded before planning: the job holds no rows to keep.
        if (job_pid > 0) {
            ::kill(job_pid, SIGKILL);
        }
        fs::remove(pending, ec);
        return kRunsFailed;
    }
    int code = kRunsFailed;
    if (line.rfind("failed ", 0) == 0) {
        code = std::atoi(line.c_str() + 7);
    }
    say(stderr, "%s", output.c_str());
    if (line.empty()) {
        say(stderr, "launch: the job ended before it planned the experiment\n");
    }
    fs::remove(pending, ec);
    return code == kOk ? kRunsFailed : code;
}

}  // namespace

int commandStatus(const std::string& db_path, int64_t experiment_id, bool as_json) {
    std::unique_ptr<store::Database> db = openOrSay(db_path, store::Database::Mode::ReadOnly);
    if (!db) {
        return kStoreError;
    }
    bool have_dir = false;
    try {
        have_dir = checkJobsDir(db_path, false);
    } catch (const JobFileError& e) {
        say(stderr, "status: %s\n", e.what());
        return kIoError;
    }
    struct Entry {
        int64_t id = 0;
        std::optional<Job> job;
        std::string problem;  ///< why its job file could not be read
    };
    auto entryOf = [&](int64_t id) {
        Entry e;
        e.id = id;
        if (have_dir) {
            try {
                e.job = readJob(jobFile(db_path, id), id);
            } catch (const JobFileError& error) {
                e.problem = error.what();
            }
        }
        return e;
    };
    std::vector<Entry> entries;
    if (experiment_id > 0) {
        Entry e = entryOf(experiment_id);
        if (!e.job && e.problem.empty() && !db->experiment(experiment_id)) {
            say(stderr, "status: no experiment %lld in %s\n", static_cast<long long>(experiment_id),
                db_path.c_str());
            return kNotFound;
        }
        entries.push_back(std::move(e));
    } else if (have_dir) {
        std::error_code ec;
        std::vector<int64_t> ids;
        for (const auto& e : fs::directory_iterator(jobsDir(db_path), ec)) {
            const std::string stem = e.path().stem();
            if (e.path().extension() == ".json" && !stem.empty() && stem.size() < 19 &&
                stem.find_first_not_of("0123456789") == std::string::npos) {
                ids.push_back(std::atoll(stem.c_str()));
            }
        }
        std::sort(ids.begin(), ids.end());
        for (int64_t id : ids) {
            entries.push_back(entryOf(id));
        }
    }
    json out = json::array();
    for (const auto& e : entries) {
        const auto runs = db->runs(e.id);
        const auto experiment = db->experiment(e.id);
        auto launcher = launcherFor(e.job ? e.job->scheduler : std::string());
        json j = {{"experiment_id", e.id}, {"name", experiment ? experiment->name : std::string()}};
        j.update(launcher->describe(db_path, e.job ? &*e.job : nullptr, runs));
        if (e.job) {
            j["pid"] = static_cast<int>(e.job->pid);
            j["log"] = e.job->log;
            j["started_at"] = e.job->started_at;
            if (e.job->exit_code) {
                j["exit_code"] = *e.job->exit_code;
                j["ended_at"] = e.job->ended_at;
            }
        }
        if (!e.problem.empty()) {
            // Whether its process still runs is not known; the other jobs are listed.
            j["state"] = "unknown";
            j["job_file_problem"] = e.problem;
            if (as_json) {
                say(stderr, "status: %s\n", e.problem.c_str());
            }
        }
        out.push_back(j);
    }
    if (as_json) {
        printJson(json{{"jobs", out}});
        return kOk;
    }
    if (out.empty()) {
        say(stdout, "no launched jobs in %s\n", db_path.c_str());
        return kOk;
    }
    for (const auto& j : out) {
        say(stdout, "experiment %lld '%s': %s", static_cast<long long>(j["experiment_id"]),
            analysis::printable(j["name"].get<std::string>(), false).c_str(),
            j["state"].get<std::string>().c_str());
        if (j.contains("slurm")) {
            const json& s = j["slurm"];
            say(stdout, " (Slurm job %s, collector pid %d, log %s)",
                s.value("job_id", std::string()).c_str(), j.value("pid", 0),
                analysis::printable(j.value("log", std::string()), false).c_str());
            if (s.contains("problem")) {
                say(stdout, "; %s",
                    analysis::printable(s["problem"].get<std::string>(), false).c_str());
            }
        } else if (j.contains("pid")) {
            say(stdout, " (pid %d, log %s)", j["pid"].get<int>(),
                analysis::printable(j["log"].get<std::string>(), false).c_str());
        } else if (j.contains("job_file_problem")) {
            say(stdout, " (%s)",
                analysis::printable(j["job_file_problem"].get<std::string>(), false).c_str());
        }
        say(stdout, "\n");
        for (const auto& r : j["runs"]) {
            const int64_t planned = r["planned_steps"];
            const int64_t step = r["step"];
            say(stdout, "  run %lld %-12s seed %-3llu %-11s step %lld/%lld (%.0f%%)",
                static_cast<long long>(r["id"]),
                analysis::printable(r["arm"].get<std::string>(), false).c_str(),
                static_cast<unsigned long long>(r["seed"].get<uint64_t>()),
                r["status"].get<std::string>().c_str(), static_cast<long long>(step),
                static_cast<long long>(planned),
                planned > 0 ? 100.0 * static_cast<double>(step) / static_cast<double>(planned)
                            : 0.0);
            if (r.contains("slurm")) {
                const json& t = r["slurm"];
                std::string reason = t.value("reason", std::string());
                say(stdout, "  [Slurm task %d: %s%s%s]", t.value("task", 0),
                    t.value("state", std::string("unknown")).c_str(),
                    reason.empty() || reason == "None" ? "" : ", ",
                    reason.empty() || reason == "None" ? "" : reason.c_str());
            }
            say(stdout, "\n");
        }
    }
    return kOk;
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

json LocalLauncher::describe(const std::string& db_path, const Job* job,
                             const std::vector<store::RunRow>& runs) {
    const JobProcess process = job ? jobProcess(db_path, *job) : JobProcess::Gone;
    json j = {{"state", jobState(process, job != nullptr, runs)}, {"runs", json::array()}};
    for (const auto& r : runs) {
        j["runs"].push_back(runJson(r, job && process == JobProcess::Gone));
    }
    return j;
}

int LocalLauncher::cancel(const std::string& db_path, const Job& job, double timeout_s) {
    const int64_t experiment_id = job.experiment_id;
    const std::string path = jobFile(db_path, experiment_id);
    auto runsOf = [&] {
        return store::Database::open(db_path, store::Database::Mode::ReadOnly)->runs(experiment_id);
    };
    switch (jobProcess(db_path, job)) {
        case JobProcess::Gone:
            say(stdout, "experiment %lld already ended: %s; nothing to cancel\n",
                static_cast<long long>(experiment_id),
                jobState(JobProcess::Gone, true, runsOf()).c_str());
            return kOk;
        case JobProcess::Unconfirmed:
            say(stderr,
                "cancel: %s names pid %d, but that process is not experiment %lld's job (it "
                "does not hold %s: the pid may belong to another program now); nothing was "
                "signalled\n",
                path.c_str(), static_cast<int>(job.pid), static_cast<long long>(experiment_id),
                jobLockFile(db_path, experiment_id).c_str());
            return kNotFound;
        case JobProcess::Ours:
            break;
    }
    const pid_t pid = job.pid;
    if (signalJob(pid, job.pid_start, SIGTERM) != 0) {
        if (errno == ESRCH) {
            say(stdout, "experiment %lld already ended: %s; nothing to cancel\n",
                static_cast<long long>(experiment_id),
                jobState(JobProcess::Gone, true, runsOf()).c_str());
            return kOk;
        }
        say(stderr, "cancel: cannot signal pid %d: %s\n", pid, std::strerror(errno));
        return kIoError;
    }
    // The job turns SIGTERM into a cancel: the run in flight stops between
    // micro-batches and is recorded `cancelled`, the queued ones with it.
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000));
    while (jobProcess(db_path, job) == JobProcess::Ours) {
        if (std::chrono::steady_clock::now() > deadline) {
            say(stderr,
                "cancel: experiment %lld (pid %d) has not stopped after %g s; it "
                "stops at its next micro-batch\n",
                static_cast<long long>(experiment_id), pid, timeout_s);
            return kRunsFailed;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    const auto runs = runsOf();
    say(stdout, "experiment %lld cancelled\n", static_cast<long long>(experiment_id));
    for (const auto& r : runs) {
        say(stdout, "  run %lld %s seed %llu: %s at step %lld\n", static_cast<long long>(r.id),
            analysis::printable(r.arm, false).c_str(), static_cast<unsigned long long>(r.seed),
            run::toString(r.status).c_str(), static_cast<long long>(r.last_step));
    }
    return kOk;
}

int commandHost(const std::string& data_dir, bool as_json) {
    json out = {{"version", config::buildVersion()}, {"commit", config::buildCommit()}};
    const probe::Environment cpu = probe::probeEnvironment("cpu");
    out["libtorch"] = cpu.libtorch_version;
    out["cpu"] = {
        {"name", cpu.device_name}, {"memory", cpu.device_memory}, {"cores", cpu.cpu_cores}};
    out["cuda"] = json::array();
    if (probe::cudaAvailable()) {
        const probe::Environment gpu = probe::probeEnvironment("cuda");
        out["cuda"].push_back({{"name", gpu.device_name},
                               {"memory", gpu.device_memory},
                               {"compute_capability", gpu.compute_capability},
                               {"driver", gpu.driver_version}});
    }
    // What `launch --slurm` would find on this PATH (a desktop's Test connection of a
    // cluster's login host names the missing ones): each tool's path, empty when absent.
    json tools = json::object();
    for (const char* tool : {"sbatch", "squeue", "sacct", "scancel"}) {
        tools[tool] = slurm::findProgram(tool);
    }
    out["slurm_tools"] = tools;
    const char* path_env = std::getenv("PATH");
    out["path"] = path_env ? path_env : "";
    if (!data_dir.empty()) {
        std::error_code ec;
        json d = {{"path", data_dir}, {"exists", fs::is_directory(data_dir, ec)}};
        json entries = json::array();
        for (const auto& e : fs::directory_iterator(data_dir, ec)) {
            if (entries.size() < 50) {
                entries.push_back(e.path().filename().string());
            }
        }
        d["entries"] = entries;
        out["data"] = d;
    }
    if (as_json) {
        printJson(out);
        return kOk;
    }
    say(stdout, "ampbench-cli %s, LibTorch %s\n", config::buildVersion(),
        cpu.libtorch_version.c_str());
    say(stdout, "CPU  %s, %d cores, %s\n", cpu.device_name.c_str(), cpu.cpu_cores,
        analysis::formatBytes(cpu.device_memory).c_str());
    for (const auto& g : out["cuda"]) {
        say(stdout, "CUDA %s, %s\n", g["name"].get<std::string>().c_str(),
            analysis::formatBytes(g["memory"].get<int64_t>()).c_str());
    }
    if (out["cuda"].empty()) {
        say(stdout, "CUDA none visible\n");
    }
    std::string found, absent;
    for (const auto& [tool, where] : out["slurm_tools"].items()) {
        std::string& list = where.get<std::string>().empty() ? absent : found;
        list += (list.empty() ? "" : ", ") + tool;
    }
    say(stdout, "Slurm %s%s%s\n", found.empty() ? "none" : found.c_str(),
        absent.empty() || found.empty() ? "" : "; not on PATH: ",
        absent.empty() || found.empty() ? "" : absent.c_str());
    if (out.contains("data")) {
        say(stdout, "data %s: %s\n", data_dir.c_str(),
            out["data"]["exists"].get<bool>()
                ? (std::to_string(out["data"]["entries"].size()) + " entries").c_str()
                : "missing");
    }
    return kOk;
}

}  // namespace ampbench::cli
