// `launch --resume --experiment ID`: a new collector for a job array whose collector
// died (ArrayLauncher.cpp). It takes the job's lock without replacing the lock file,
// reads every attempt's stream again in order (rows the database holds are not added
// twice), takes back the runs its death left interrupted and reuses runs a requeue
// already added.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>

#include "cli/ArrayCollector.h"
#include "cli/Detach.h"
#include "cli/ExitCodes.h"
#include "cli/JobFiles.h"
#include "cli/Terminal.h"
#include "core/config/BuildInfo.h"
#include "core/launch/Scheduler.h"
#include "core/launch/TaskList.h"
#include "core/store/Database.h"

namespace ampbench::cli {
namespace {

/// The detached collector of `launch --resume`: takes the job over from the one that
/// died, then collects as it would have. Tells the launcher "resumed ID" or "failed CODE".
int runResumedCollector(const std::string& db_path, const launch::Scheduler& scheduler, Job job,
                        int report) {
    auto tell = [&](const std::string& what) {
        if (report >= 0) {
            writeAll(report, what + "\n");
            ::close(report);
            report = -1;
        }
    };
    const int64_t id = job.experiment_id;
    const std::string dir = arrayDir(db_path, id, scheduler.info().name);
    try {
        takeOverJobLock(db_path, id);  // before the file that names this pid
    } catch (const JobFileError& e) {
        say(stderr, "launch --resume: %s; a second collector is not started\n", e.what());
        tell("failed " + std::to_string(kUsage));
        return kUsage;
    }
    std::unique_ptr<store::Database> db;
    launch::TaskList list;
    try {
        list = launch::readTaskList(launch::taskListFile(dir));
    } catch (const std::exception& e) {
        say(stderr, "launch --resume: %s\n", e.what());
        tell("failed " + std::to_string(kDataMissing));
        return kDataMissing;
    }
    try {
        db = store::Database::open(db_path);
        db->requireIntact();
        if (!db->experiment(id)) {
            say(stderr, "launch --resume: %s has no experiment %lld (it was deleted?)\n",
                db_path.c_str(), static_cast<long long>(id));
            tell("failed " + std::to_string(kNotFound));
            return kNotFound;
        }
    } catch (const store::StoreError& e) {
        say(stderr, "%s\n", e.what());
        tell("failed " + std::to_string(kStoreError));
        return kStoreError;
    }
    const pid_t dead = job.pid;
    job.pid = ::getpid();
    job.pid_start = processStart(::getpid());
    job.exit_code.reset();
    job.ended_at = 0;
    try {
        writeJob(db_path, job);
    } catch (const JobFileError& e) {
        say(stderr, "launch --resume: %s\n", e.what());
        tell("failed " + std::to_string(kIoError));
        return kIoError;
    }
    say(stderr,
        "experiment %lld: collector started again (pid %d, the one before was pid %d) for "
        "%s job array %s; its streams are read again from the start\n",
        static_cast<long long>(id), static_cast<int>(job.pid), static_cast<int>(dead),
        scheduler.info().title.c_str(), job.scheduler_job.c_str());
    tell("resumed " + std::to_string(id));
    return collectToTheEnd(*db, scheduler, dir, list, /*resume=*/true, db_path, job);
}

}  // namespace

int resumeCollector(const std::string& db_path, const launch::Scheduler& scheduler,
                    const Job& given, double wait_s) {
    const launch::SchedulerInfo& info = scheduler.info();
    const int64_t id = given.experiment_id;
    std::optional<Job> job = given;
    if (job->scheduler_job.empty()) {
        say(stderr,
            "launch --resume: experiment %lld's job array was never submitted (%s names no "
            "%s job): there is nothing to collect\n",
            static_cast<long long>(id), jobFile(db_path, id).c_str(), info.title.c_str());
        return kUsage;
    }
    const JobProcess process = jobProcess(db_path, *job);
    const pid_t holder = jobLockHolder(db_path, id);
    if (process == JobProcess::Ours || holder > 0) {
        say(stderr,
            "launch --resume: experiment %lld's collector is running (pid %d); a second one is "
            "not started (`status --experiment %lld` shows its progress)\n",
            static_cast<long long>(id), static_cast<int>(holder > 0 ? holder : job->pid),
            static_cast<long long>(id));
        return kUsage;
    }
    if (const std::string missing = launch::missingTools(info, {info.query_tool});
        !missing.empty()) {
        say(stderr, "launch --resume: %s\n", missing.c_str());
        return kUsage;
    }
    if (job->exit_code) {
        say(stderr,
            "launch --resume: experiment %lld's collector ended with exit code %d; its "
            "streams are read again for anything it did not record\n",
            static_cast<long long>(id), *job->exit_code);
    }
    // The log carries on where the dead collector's stopped.
    const std::string log_path = job->log.empty() ? jobLogFile(db_path, id) : job->log;
    int log = ::open(log_path.c_str(), O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
    if (log < 0) {
        log = createLog(log_path);
    }
    if (log < 0) {
        say(stderr, "launch --resume: cannot open the collector's log %s: %s\n", log_path.c_str(),
            std::strerror(errno));
        return kIoError;
    }
    job->log = log_path;
    const Job taken = *job;
    const DetachedStart start = startDetached(
        log, [&](int report) { return runResumedCollector(db_path, scheduler, taken, report); },
        wait_s, [](const std::string& said) { return said.find('\n') != std::string::npos; });
    if (!start.started) {
        say(stderr, "launch --resume: %s\n", start.error.c_str());
        return kIoError;
    }
    const std::string& said = start.said;
    if (said.rfind("resumed ", 0) == 0) {
        std::optional<Job> now;
        try {
            now = readJob(jobFile(db_path, id), id);
        } catch (const JobFileError& e) {
            say(stderr, "launch --resume: %s\n", e.what());
        }
        if (!now) {
            return kIoError;
        }
        printJson({{"experiment_id", id},
                   {"pid", static_cast<int>(now->pid)},
                   {"log", now->log},
                   {"runs", now->runs},
                   {"scheduler", info.name},
                   {info.name + "_job_id", now->scheduler_job},
                   {"resumed", true},
                   {"version", config::buildVersion()}});
        return kOk;
    }
    // Its words are the last lines of the log it shares with the collector before it.
    say(stderr, "%s\n", outputTail(log_path).c_str());
    if (said.rfind("failed ", 0) == 0) {
        const int code = std::atoi(said.c_str() + 7);
        return code == kOk ? kRunsFailed : code;
    }
    say(stderr, "launch --resume: the collector did not start within %.0f s\n", wait_s);
    return kRunsFailed;
}
}  // namespace ampbench::cli
