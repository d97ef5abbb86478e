// `launch --slurm`, and `status` and `cancel` of what it started: an experiment's runs
// as one Slurm job array, a task per run, or per group of runs_per_gpu runs that the
// task trains side by side on its GPU.
//
// On the login host, launch starts a collector (setsid, double fork, as a local job
// is started) that plans the experiment in the database, so the experiment id it
// prints is the one that gets the rows and the runs stay `queued` until their task
// starts. It writes what the tasks read into <db>.jobs/<experiment>.slurm/ (the spec
// and the runs of each task: tasks.json; the batch script), submits the array with
// `sbatch --parsable`, and then ingests the record streams the tasks write there
// (task-I.attempt-A.jsonl) into the database as they grow, row by row under their
// sequence numbers, so reading a stream again adds nothing. It holds the job's lock
// while it collects, like a local job, and ends when Slurm says every task has ended
// and their streams are read to the end. The tasks never open the database.
//
// What a run's end says comes from its stream (finished, failed, cancelled) and from
// Slurm (a task over its time limit, preempted, killed, cancelled before it started).
// A requeued task writes a new attempt's stream: the run of the earlier attempt keeps
// its rows and ends `interrupted`, and the new attempt trains as a new run of the
// experiment (same arm and seed), so no row is repeated and none is lost.
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "cli/Commands.h"
#include "cli/Detach.h"
#include "cli/ExitCodes.h"
#include "cli/JobFiles.h"
#include "cli/Launcher.h"
#include "cli/Slurm.h"
#include "cli/SlurmCollector.h"
#include "cli/Terminal.h"
#include "core/analysis/Format.h"
#include "core/config/BuildInfo.h"
#include "core/config/SpecJson.h"
#include "core/store/Database.h"
#include "core/store/NumericsStore.h"
#include "core/stream/RecordStream.h"
#include "core/train/Experiment.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace ampbench::cli {
namespace {

/// The collector's work and its end: follows the array (collectArray) and records the
/// exit code and end time in the job file, whatever stopped it.
int collectToTheEnd(store::Database& db, const std::string& dir, const std::string& job_id,
                    int64_t id, const slurm::TaskList& list, bool resume,
                    const std::string& db_path, Job& job) {
    int code = kRunsFailed;
    try {
        code = collectArray(db, dir, job_id, id, list, resume);
    } catch (const std::exception& e) {
        say(stderr, "the collector stopped: %s\n", e.what());
    }
    job.exit_code = code;
    job.ended_at = static_cast<int64_t>(std::time(nullptr));
    try {
        writeJob(db_path, job);
    } catch (const JobFileError& e) {
        say(stderr, "%s\n", e.what());
    }
    std::fflush(stdout);
    std::fflush(stderr);
    return code;
}

/// The detached collector: plans, submits, collects. Tells the launcher on `report`
/// ("planned ID" once the array is submitted, or "failed CODE") and closes it.
int runCollector(const std::string& db_path, const config::ValidSpec& valid, const LaunchOptions& l,
                 const std::string& pending_log, int report) {
    auto tell = [&](const std::string& what) {
        if (report >= 0) {
            writeAll(report, what + "\n");
            ::close(report);
            report = -1;
        }
    };
    std::unique_ptr<store::Database> db;
    train::ExperimentPlan plan;
    try {
        db = store::Database::open(db_path);
        db->requireIntact();
        plan = train::planExperiment(*db, valid);
    } catch (const store::StoreError& e) {
        say(stderr, "%s\n", e.what());
        tell("failed " + std::to_string(kStoreError));
        return kStoreError;
    } catch (const std::exception& e) {
        say(stderr, "%s\n", e.what());
        tell("failed " + std::to_string(kUsage));
        return kUsage;
    }
    const int64_t id = plan.experiment_id;
    const config::ExperimentSpec& spec = valid.spec();
    auto failAll = [&](const std::string& why) {
        for (const auto& r : plan.runs) {
            db->finishRun(r.run_id, run::RunStatus::Failed, why, run::FailureKind::Setup);
        }
    };
    const std::string dir = slurmDir(db_path, id);
    Job job;
    job.experiment_id = id;
    job.pid = ::getpid();
    job.pid_start = processStart(::getpid());
    job.log = pending_log;
    job.db = db_path;
    job.device = config::toString(spec.device);
    job.runs = static_cast<int64_t>(plan.runs.size());
    job.started_at = static_cast<int64_t>(std::time(nullptr));
    job.scheduler = "slurm";
    slurm::TaskList list;
    list.experiment_id = id;
    list.experiment_name = spec.name;
    list.spec_json = config::specToJsonText(spec);
    list.time_limit = l.time_limit;
    try {
        std::error_code ec;
        if (fs::exists(fs::symlink_status(dir, ec))) {  // a deleted experiment's, same id
            fs::rename(dir, dir + ".old-" + std::to_string(std::time(nullptr)), ec);
        }
        if (::mkdir(dir.c_str(), 0700) != 0) {
            throw std::runtime_error("cannot create " + dir + ": " + std::strerror(errno));
        }
        // runs_per_gpu packs runs as `run` packs them on one GPU: a task per group of
        // that many runs, in plan order, trained side by side in the task.
        const size_t per_task = static_cast<size_t>(std::max(1, spec.runs_per_gpu));
        for (const auto& r : plan.runs) {
            const auto row = db->run(r.run_id);
            slurm::TaskRun t;
            t.run_id = r.run_id;
            t.arm = r.arm;
            t.arm_index = r.arm_index;
            t.seed = r.seed;
            t.planned_steps = r.planned_steps;
            t.arm_json = row ? row->spec_json : std::string();
            t.inputs_json = row ? row->inputs_json : std::string();
            if (list.tasks.empty() || list.tasks.back().size() >= per_task) {
                list.tasks.emplace_back();
            }
            list.tasks.back().push_back(t);
        }
        writePrivateFile(slurm::taskListFile(dir), slurm::taskListText(list));
        const std::string found = ownExecutable();
        const std::string self = found.empty() ? std::string("ampbench-cli") : found;
        writePrivateFile(slurm::batchScript(dir),
                         "#!/bin/sh\n# Experiment " + std::to_string(id) + " of " + db_path +
                             ": one task per group of " + std::to_string(per_task) +
                             " runs (written by ampbench-cli launch --slurm)\nexec " +
                             slurm::shellQuote(self) + " slurm-task --dir " +
                             slurm::shellQuote(dir) + " --task \"$SLURM_ARRAY_TASK_ID\"\n",
                         0700);
        holdJobLock(db_path, id);
        writeJob(db_path, job);
    } catch (const std::exception& e) {
        say(stderr, "launch: %s\n", e.what());
        failAll(std::string("not submitted: ") + e.what());
        tell("failed " + std::to_string(kIoError));
        return kIoError;
    }
    std::vector<std::string> argv = {"sbatch",
                                     "--parsable",
                                     "--array=0-" + std::to_string(list.tasks.size() - 1),
                                     "--job-name=ampbench-" + std::to_string(id),
                                     "--output=" + dir + "/task-%a.out",
                                     "--open-mode=append"};
    if (!l.partition.empty()) {
        argv.push_back("--partition=" + l.partition);
    }
    if (l.gpus_per_task > 0) {
        argv.push_back("--gpus-per-task=" + std::to_string(l.gpus_per_task));
    }
    if (!l.time_limit.empty()) {
        argv.push_back("--time=" + l.time_limit);
    }
    for (const auto& o : l.sbatch_options) {
        argv.push_back(o);
    }
    argv.push_back(slurm::batchScript(dir));
    const slurm::ProgramResult submitted = slurm::runProgram(argv, 120);
    const std::string job_id = slurm::parsableJobId(submitted.out);
    if (!submitted.ok() || job_id.empty()) {
        const std::string words = submitted.words();
        say(stderr, "launch: sbatch refused the job array (exit %d): %s\n", submitted.exit_code,
            analysis::printable(words, false).c_str());
        say(stderr, "launch: experiment %lld's %zu runs are recorded failed with Slurm's words\n",
            static_cast<long long>(id), plan.runs.size());
        failAll("not submitted: sbatch refused the job array: " + words);
        job.exit_code = kUsage;
        job.ended_at = static_cast<int64_t>(std::time(nullptr));
        try {
            writeJob(db_path, job);
        } catch (const JobFileError&) {
        }
        tell("failed " + std::to_string(kUsage));
        return kUsage;
    }
    job.scheduler_job = job_id;
    const std::string log = jobLogFile(db_path, id);
    std::error_code ec;
    fs::rename(pending_log, log, ec);  // the open descriptor keeps writing to it
    job.log = ec ? pending_log : log;
    try {
        writeJob(db_path, job);
    } catch (const JobFileError& e) {
        say(stderr, "%s\n", e.what());
    }
    say(stderr,
        "experiment %lld '%s': %zu runs as Slurm job array %s of %zu tasks (up to %d runs "
        "each, runs_per_gpu), recording to %s\n",
        static_cast<long long>(id), analysis::printable(spec.name, false).c_str(), plan.runs.size(),
        job_id.c_str(), list.tasks.size(), std::max(1, spec.runs_per_gpu), db_path.c_str());
    tell("planned " + std::to_string(id));
    return collectToTheEnd(*db, dir, job_id, id, list, /*resume=*/false, db_path, job);
}

/// The detached collector of `launch --resume`: takes the job over from the one that
/// died, then collects as it would have. Tells the launcher "resumed ID" or "failed CODE".
int runResumedCollector(const std::string& db_path, Job job, int report) {
    auto tell = [&](const std::string& what) {
        if (report >= 0) {
            writeAll(report, what + "\n");
            ::close(report);
            report = -1;
        }
    };
    const int64_t id = job.experiment_id;
    const std::string dir = slurmDir(db_path, id);
    try {
        takeOverJobLock(db_path, id);  // before the file that names this pid
    } catch (const JobFileError& e) {
        say(stderr, "launch --resume: %s; a second collector is not started\n", e.what());
        tell("failed " + std::to_string(kUsage));
        return kUsage;
    }
    std::unique_ptr<store::Database> db;
    slurm::TaskList list;
    try {
        list = slurm::readTaskList(slurm::taskListFile(dir));
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
        "Slurm job array %s; its streams are read again from the start\n",
        static_cast<long long>(id), static_cast<int>(job.pid), static_cast<int>(dead),
        job.scheduler_job.c_str());
    tell("resumed " + std::to_string(id));
    return collectToTheEnd(*db, dir, job.scheduler_job, id, list, /*resume=*/true, db_path, job);
}

class SlurmLauncher final : public Launcher {
  public:
    int launch(const std::string& db_path, const config::ValidSpec& valid,
               const LaunchOptions& l) override;
    json describe(const std::string& db_path, const Job* job,
                  const std::vector<store::RunRow>& runs) override;
    int cancel(const std::string& db_path, const Job& job, double timeout_s) override;
};

int SlurmLauncher::launch(const std::string& db_path, const config::ValidSpec& valid,
                          const LaunchOptions& l) {
    if (const std::string missing = missingTools({"sbatch", "squeue", "scancel"});
        !missing.empty()) {
        say(stderr, "launch --slurm: %s\n", missing.c_str());
        return kUsage;
    }
    try {
        store::Database::open(db_path);  // a file we cannot write fails here, not in the log
        checkJobsDir(db_path, true);
    } catch (const store::StoreError& e) {
        say(stderr, "%s\n", e.what());
        return kStoreError;
    } catch (const JobFileError& e) {
        say(stderr, "launch: %s\n", e.what());
        return kIoError;
    }
    const std::string pending = pendingLogFile(db_path, ::getpid());
    const int log = createLog(pending);
    if (log < 0) {
        say(stderr, "launch: cannot create the collector's log %s: %s\n", pending.c_str(),
            std::strerror(errno));
        return kIoError;
    }
    // The collector says "planned ID" once the array is submitted, or "failed CODE".
    const DetachedStart start = startDetached(
        log, [&](int report) { return runCollector(db_path, valid, l, pending, report); }, l.wait_s,
        [](const std::string& said) { return said.find('\n') != std::string::npos; });
    if (!start.started) {
        say(stderr, "launch: %s\n", start.error.c_str());
        return kIoError;
    }
    const std::string& said = start.said;
    if (said.rfind("planned ", 0) == 0) {
        const int64_t id = std::atoll(said.c_str() + 8);
        std::optional<Job> job;
        try {
            job = readJob(jobFile(db_path, id), id);
        } catch (const JobFileError& e) {
            say(stderr, "launch: %s\n", e.what());
        }
        if (!job) {
            say(stderr, "launch: experiment %lld was submitted but %s cannot be read\n",
                static_cast<long long>(id), jobFile(db_path, id).c_str());
            return kIoError;
        }
        printJson({{"experiment_id", id},
                   {"pid", static_cast<int>(job->pid)},
                   {"log", job->log},
                   {"runs", job->runs},
                   {"scheduler", "slurm"},
                   {"slurm_job_id", job->scheduler_job},
                   {"version", config::buildVersion()}});
        return kOk;
    }
    say(stderr, "%s", readText(pending).c_str());
    std::error_code ec;
    fs::remove(pending, ec);
    if (said.rfind("failed ", 0) == 0) {
        const int code = std::atoi(said.c_str() + 7);
        return code == kOk ? kRunsFailed : code;
    }
    say(stderr, "launch: the collector did not submit the job array within %.0f s\n", l.wait_s);
    return kRunsFailed;
}

json SlurmLauncher::describe(const std::string& db_path, const Job* job,
                             const std::vector<store::RunRow>& runs) {
    const JobProcess process = job ? jobProcess(db_path, *job) : JobProcess::Gone;
    // A run whose task was requeued is followed by a later run of its arm and seed:
    // the later one tells how the experiment stands.
    std::map<int64_t, int64_t> superseded_by;
    std::vector<store::RunRow> current;
    for (const auto& r : runs) {
        for (const auto& later : runs) {
            if (later.id > r.id && later.arm_index == r.arm_index && later.seed == r.seed &&
                later.rerun_of == 0 && r.rerun_of == 0) {
                superseded_by[r.id] = later.id;
                break;
            }
        }
        if (superseded_by.count(r.id) == 0) {
            current.push_back(r);
        }
    }
    json out = {{"state", jobState(process, job != nullptr, current)}, {"scheduler", "slurm"}};
    json s = {{"job_id", job ? job->scheduler_job : std::string()}, {"tasks", json::array()}};
    std::vector<std::vector<slurm::TaskRun>> tasks;
    if (job) {
        try {
            tasks = slurm::readTaskList(slurm::taskListFile(slurmDir(db_path, job->experiment_id)))
                        .tasks;
        } catch (const std::exception& e) {
            s["problem"] = e.what();
        }
    }
    slurm::ArrayView view;
    if (job && !job->scheduler_job.empty()) {
        if (const std::string missing = missingTools({"squeue"}); !missing.empty()) {
            s["problem"] = missing;
        } else {
            view = slurm::queryArray(job->scheduler_job, true);
            if (!view.squeue_ok) {
                s["problem"] = view.problem;
            }
        }
    }
    auto taskOf = [&](const store::RunRow& r) {
        for (size_t i = 0; i < tasks.size(); ++i) {
            for (const auto& t : tasks[i]) {
                if (t.arm_index == r.arm_index && t.seed == r.seed) {
                    return static_cast<int>(i);
                }
            }
        }
        return -1;
    };
    for (size_t i = 0; i < tasks.size(); ++i) {
        json t = {{"task", static_cast<int>(i)}};
        if (auto it = view.tasks.find(static_cast<int>(i)); it != view.tasks.end()) {
            t["state"] = it->second.state;
            t["reason"] = it->second.reason;
            t["node"] = it->second.node;
            t["time_limit"] = it->second.time_limit;
            t["time_used"] = it->second.time_used;
            if (!it->second.exit_code.empty()) {
                t["exit_code"] = it->second.exit_code;
            }
        }
        s["tasks"].push_back(t);
    }
    bool all_pending = process == JobProcess::Ours && !tasks.empty();
    std::string reason;
    out["runs"] = json::array();
    for (const auto& r : runs) {
        json j = runJson(r, job && process == JobProcess::Gone);
        if (const auto it = superseded_by.find(r.id); it != superseded_by.end()) {
            j["superseded_by"] = it->second;  // its task was requeued: trained again there
        }
        const int task = taskOf(r);
        if (task >= 0) {
            json t = s["tasks"][static_cast<size_t>(task)];
            j["slurm"] = t;
            if (r.status != run::RunStatus::Queued || t.value("state", "") != "PENDING") {
                all_pending = false;
            } else if (reason.empty()) {
                reason = t.value("reason", "");
            }
        }
        out["runs"].push_back(j);
    }
    if (all_pending && !view.tasks.empty()) {
        out["state"] = "pending";
        out["reason"] = reason;
    }
    out["slurm"] = s;
    return out;
}

int SlurmLauncher::cancel(const std::string& db_path, const Job& job, double timeout_s) {
    const int64_t id = job.experiment_id;
    auto runsOf = [&] {
        return store::Database::open(db_path, store::Database::Mode::ReadOnly)->runs(id);
    };
    const JobProcess process = jobProcess(db_path, job);
    if (job.scheduler_job.empty() || job.exit_code) {
        say(stdout, "experiment %lld already ended: %s; nothing to cancel\n",
            static_cast<long long>(id), jobState(process, true, runsOf()).c_str());
        return kOk;
    }
    if (const std::string missing = missingTools({"scancel"}); !missing.empty()) {
        say(stderr, "cancel: %s\n", missing.c_str());
        return kUsage;
    }
    const slurm::ProgramResult r = slurm::runProgram({"scancel", job.scheduler_job});
    if (!r.ok()) {
        if (r.words().find("Invalid job id") == std::string::npos) {
            say(stderr, "cancel: scancel %s refused (exit %d): %s\n", job.scheduler_job.c_str(),
                r.exit_code, analysis::printable(r.words(), false).c_str());
            return kRunsFailed;
        }
    }
    if (process != JobProcess::Ours) {
        say(stdout,
            "experiment %lld: Slurm was told to cancel job %s, but its collector (pid %d) is "
            "gone: the runs it did not record read interrupted\n",
            static_cast<long long>(id), job.scheduler_job.c_str(), static_cast<int>(job.pid));
        return kOk;
    }
    // The tasks hear SIGTERM and end their runs cancelled; the collector records
    // them and the tasks that never started, then exits.
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000));
    while (jobProcess(db_path, job) == JobProcess::Ours) {
        if (std::chrono::steady_clock::now() > deadline) {
            say(stderr,
                "cancel: Slurm job %s was cancelled, but experiment %lld's collector (pid %d) "
                "has not recorded its end after %g s\n",
                job.scheduler_job.c_str(), static_cast<long long>(id), static_cast<int>(job.pid),
                timeout_s);
            return kRunsFailed;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    say(stdout, "experiment %lld cancelled (Slurm job %s)\n", static_cast<long long>(id),
        job.scheduler_job.c_str());
    for (const auto& row : runsOf()) {
        say(stdout, "  run %lld %s seed %llu: %s at step %lld\n", static_cast<long long>(row.id),
            analysis::printable(row.arm, false).c_str(), static_cast<unsigned long long>(row.seed),
            run::toString(row.status).c_str(), static_cast<long long>(row.last_step));
    }
    return kOk;
}

}  // namespace

int resumeCollector(const std::string& db_path, int64_t id, double wait_s) {
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
            "started with `launch --slurm` have a collector to start again)\n",
            static_cast<long long>(id), db_path.c_str());
        return kNotFound;
    }
    if (job->scheduler != "slurm") {
        say(stderr,
            "launch --resume: experiment %lld was launched on this machine, not with --slurm: "
            "its runs trained inside the job itself, and there is no stream to collect; "
            "`rerun` trains a run again\n",
            static_cast<long long>(id));
        return kUsage;
    }
    if (job->scheduler_job.empty()) {
        say(stderr,
            "launch --resume: experiment %lld's job array was never submitted (%s names no "
            "Slurm job): there is nothing to collect\n",
            static_cast<long long>(id), jobFile(db_path, id).c_str());
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
    if (const std::string missing = missingTools({"squeue"}); !missing.empty()) {
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
        log, [&](int report) { return runResumedCollector(db_path, taken, report); }, wait_s,
        [](const std::string& said) { return said.find('\n') != std::string::npos; });
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
                   {"scheduler", "slurm"},
                   {"slurm_job_id", now->scheduler_job},
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

std::unique_ptr<Launcher> makeSlurmLauncher() {
    return std::make_unique<SlurmLauncher>();
}

}  // namespace ampbench::cli
