// This machine's launcher (`launch` without a scheduler): an experiment that runs
// detached here (a GPU server reached over SSH), its status and its cancel.
//
// A launched job is one process (setsid, double fork: it outlives the SSH session)
// that trains into the database exactly as `run` does. Beside the database, in
// <db>.jobs/ (mode 0700, this user's own), it leaves <experiment>.json (pid, its
// start time, log, exit code), <experiment>.log (its stdout and stderr) and
// <experiment>.lock, which it holds locked while it runs: `cancel` signals only
// the process that holds it. Every file there is created exclusively, mode 0600,
// never through a link.
#include <sys/types.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>

#include "cli/Commands.h"
#include "cli/Detach.h"
#include "cli/ExitCodes.h"
#include "cli/Interrupt.h"
#include "cli/JobFiles.h"
#include "cli/Launcher.h"
#include "cli/OpenDatabase.h"
#include "cli/RunHooks.h"
#include "cli/ScriptRun.h"
#include "cli/Terminal.h"
#include "core/analysis/Format.h"
#include "core/config/BuildInfo.h"
#include "core/launch/Scheduler.h"
#include "core/script/Trainers.h"
#include "core/store/Database.h"
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
    RunHooks::Options options;
    options.spec = &spec;
    options.device = device;
    options.db_path = db_path;
    options.script = script;
    options.planned = [&](const train::ExperimentPlan& plan) {
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
        if (report >= 0) {
            writeAll(report, "planned " + std::to_string(plan.experiment_id) + "\n");
            ::close(report);
            report = -1;
        }
    };
    RunHooks hooks(std::move(options));
    train::ExperimentResult result;
    script::Trainers trainers;
    if (script) {
        trainers.script = *script;
    }
    int code = sayingWhatStopped(
        [&] { result = script::trainExperiment(*db, valid, cancel, hooks.hooks(), trainers); });
    if (code == kOk) {
        code = hooks.exitCode(result, cancel);
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

/// This machine: the experiment trains in one detached process (setsid, double fork).
class LocalLauncher final : public Launcher {
  public:
    int launch(const std::string& db_path, const config::ValidSpec& valid,
               const LaunchOptions& l) override;
    json describe(const std::string&, const Job* job,
                  const std::vector<store::RunRow>& runs) override;
    int cancel(const std::string& db_path, const Job& job, double timeout_s) override;
    int resume(const std::string& db_path, const Job& job, double wait_s) override;
};

}  // namespace

int LocalLauncher::launch(const std::string& db_path, const config::ValidSpec& valid,
                          const LaunchOptions& l) {
    const script::ScriptSettings* script = l.script;
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

int LocalLauncher::resume(const std::string&, const Job& job, double) {
    say(stderr,
        "launch --resume: experiment %lld was launched on this machine, not with %s: "
        "its runs trained inside the job itself, and there is no stream to collect; "
        "`rerun` trains a run again\n",
        static_cast<long long>(job.experiment_id), launch::schedulerFlags().c_str());
    return kUsage;
}

std::unique_ptr<Launcher> makeLocalLauncher() {
    return std::make_unique<LocalLauncher>();
}

}  // namespace ampbench::cli
