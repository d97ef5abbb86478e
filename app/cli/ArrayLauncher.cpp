// `launch --<scheduler>` (--slurm, --gridengine), and `status` and `cancel` of what it
// started: an experiment's runs as one job array of that scheduler (launch::Scheduler),
// a task per run, or per group of runs_per_gpu runs that the task trains side by side
// on its GPU. Nothing here knows which scheduler it is.
//
// On the login host, launch starts a collector (setsid, double fork, as a local job
// is started) that plans the experiment in the database, so the experiment id it
// prints is the one that gets the rows and the runs stay `queued` until their task
// starts. It writes what the tasks read into <db>.jobs/<experiment>.<scheduler>/ (the
// spec and the runs of each task: tasks.json; the batch script), submits the array,
// and then ingests the record streams the tasks write there (task-I.attempt-A.jsonl)
// into the database as they grow, row by row under their sequence numbers, so reading
// a stream again adds nothing (ArrayCollector.cpp). It holds the job's lock while it
// collects, like a local job, and ends when the scheduler says every task has ended
// and their streams are read to the end. The tasks never open the database
// (ArrayTask.cpp).
//
// What a run's end says comes from its stream (finished, failed, cancelled) and from
// the scheduler (a task over its time limit, preempted, killed, cancelled before it
// started). A requeued task writes a new attempt's stream: the run of the earlier
// attempt keeps its rows and ends `interrupted`, and the new attempt trains as a new
// run of the experiment (same arm and seed), so no row is repeated and none is lost.
// A collector that died is started again by `launch --resume` (ArrayResume.cpp).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <map>
#include <optional>
#include <thread>

#include "cli/ArrayCollector.h"
#include "cli/Commands.h"
#include "cli/Detach.h"
#include "cli/ExitCodes.h"
#include "cli/JobFiles.h"
#include "cli/Launcher.h"
#include "cli/Terminal.h"
#include "core/analysis/Format.h"
#include "core/config/BuildInfo.h"
#include "core/config/SpecJson.h"
#include "core/launch/Program.h"
#include "core/launch/Scheduler.h"
#include "core/launch/TaskList.h"
#include "core/store/Database.h"
#include "core/train/Experiment.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace ampbench::cli {
namespace {

/// The detached collector: plans, submits, collects. Tells the launcher on `report`
/// ("planned ID" once the array is submitted, or "failed CODE") and closes it.
int runCollector(const std::string& db_path, const launch::Scheduler& scheduler,
                 const config::ValidSpec& valid, const LaunchOptions& l,
                 const std::string& pending_log, int report) {
    const launch::SchedulerInfo& info = scheduler.info();
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
    const std::string dir = arrayDir(db_path, id, info.name);
    Job job;
    job.experiment_id = id;
    job.pid = ::getpid();
    job.pid_start = processStart(::getpid());
    job.log = pending_log;
    job.db = db_path;
    job.device = config::toString(spec.device);
    job.runs = static_cast<int64_t>(plan.runs.size());
    job.started_at = static_cast<int64_t>(std::time(nullptr));
    job.scheduler = info.name;
    job.scheduler_options = l.scheduler_options;
    launch::TaskList list;
    list.experiment_id = id;
    list.experiment_name = spec.name;
    list.spec_json = config::specToJsonText(spec);
    list.time_limit = launch::optionWord(l.scheduler_options, "time_limit");
    list.scheduler = info.name;
    launch::ArrayJob array;
    array.experiment_id = id;
    array.db_path = db_path;
    array.dir = dir;
    array.options = l.scheduler_options;
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
            launch::TaskRun t;
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
        writePrivateFile(launch::taskListFile(dir), launch::taskListText(list));
        const std::string found = ownExecutable();
        array.program = found.empty() ? std::string("ampbench-cli") : found;
        array.tasks = static_cast<int>(list.tasks.size());
        array.runs_per_task = static_cast<int>(per_task);
        writePrivateFile(launch::batchScript(dir), scheduler.batchScript(array), 0700);
        holdJobLock(db_path, id);
        writeJob(db_path, job);
    } catch (const std::exception& e) {
        say(stderr, "launch: %s\n", e.what());
        failAll(std::string("not submitted: ") + e.what());
        tell("failed " + std::to_string(kIoError));
        return kIoError;
    }
    const launch::Submission submitted = scheduler.submit(array, launch::batchScript(dir));
    const std::string& job_id = submitted.job_id;
    if (job_id.empty()) {
        const std::string tool = scheduler.submitCommand(array, "").front();
        say(stderr, "launch: %s refused the job array (exit %d): %s\n", tool.c_str(),
            submitted.exit_code, analysis::printable(submitted.words, false).c_str());
        say(stderr, "launch: experiment %lld's %zu runs are recorded failed with %s's words\n",
            static_cast<long long>(id), plan.runs.size(), info.title.c_str());
        failAll("not submitted: " + tool + " refused the job array: " + submitted.words);
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
        "experiment %lld '%s': %zu runs as %s job array %s of %zu tasks (up to %d runs "
        "each, runs_per_gpu), recording to %s\n",
        static_cast<long long>(id), analysis::printable(spec.name, false).c_str(), plan.runs.size(),
        info.title.c_str(), job_id.c_str(), list.tasks.size(), std::max(1, spec.runs_per_gpu),
        db_path.c_str());
    tell("planned " + std::to_string(id));
    return collectToTheEnd(*db, scheduler, dir, list, /*resume=*/false, db_path, job);
}

class ArrayLauncher final : public Launcher {
  public:
    explicit ArrayLauncher(const launch::Scheduler& scheduler) : scheduler_(scheduler) {}
    int launch(const std::string& db_path, const config::ValidSpec& valid,
               const LaunchOptions& l) override;
    json describe(const std::string& db_path, const Job* job,
                  const std::vector<store::RunRow>& runs) override;
    int cancel(const std::string& db_path, const Job& job, double timeout_s) override;
    int resume(const std::string& db_path, const Job& job, double wait_s) override {
        return resumeCollector(db_path, scheduler_, job, wait_s);
    }

  private:
    const launch::Scheduler& scheduler_;
};

int ArrayLauncher::launch(const std::string& db_path, const config::ValidSpec& valid,
                          const LaunchOptions& l) {
    const launch::SchedulerInfo& info = scheduler_.info();
    if (const std::string missing = launch::missingTools(info, launch::requiredTools(info));
        !missing.empty()) {
        say(stderr, "launch --%s: %s\n", info.name.c_str(), missing.c_str());
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
        log,
        [&](int report) { return runCollector(db_path, scheduler_, valid, l, pending, report); },
        l.wait_s, [](const std::string& said) { return said.find('\n') != std::string::npos; });
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
                   {"scheduler", info.name},
                   {info.name + "_job_id", job->scheduler_job},
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

json ArrayLauncher::describe(const std::string& db_path, const Job* job,
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
    const launch::SchedulerInfo& info = scheduler_.info();
    json out = {{"state", jobState(process, job != nullptr, current)}, {"scheduler", info.name}};
    json s = {{"job_id", job ? job->scheduler_job : std::string()}, {"tasks", json::array()}};
    std::vector<std::vector<launch::TaskRun>> tasks;
    if (job) {
        try {
            tasks = launch::readTaskList(
                        launch::taskListFile(arrayDir(db_path, job->experiment_id, info.name)))
                        .tasks;
        } catch (const std::exception& e) {
            s["problem"] = e.what();
        }
    }
    launch::ArrayView view;
    if (job && !job->scheduler_job.empty()) {
        if (const std::string missing = launch::missingTools(info, {info.query_tool});
            !missing.empty()) {
            s["problem"] = missing;
        } else {
            launch::QueryMemory memory;
            view = scheduler_.query(job->scheduler_job, true, memory);
            if (!view.answered) {
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
    // A task that left the queue after a cancel, unseen by the accounting (one that
    // never started has no record), is a cancelled one.
    const bool cancelled =
        job &&
        ::access(launch::cancelMark(arrayDir(db_path, job->experiment_id, info.name)).c_str(),
                 F_OK) == 0;
    for (size_t i = 0; i < tasks.size(); ++i) {
        json t = {{"task", static_cast<int>(i)}};
        if (cancelled && view.answered && view.tasks.count(static_cast<int>(i)) == 0) {
            t["state"] = "CANCELLED";
        }
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
            j[info.name] = t;
            const auto seen = view.tasks.find(task);
            if (r.status != run::RunStatus::Queued || seen == view.tasks.end() ||
                !seen->second.pending) {
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
    out[info.name] = s;
    return out;
}

int ArrayLauncher::cancel(const std::string& db_path, const Job& job, double timeout_s) {
    const int64_t id = job.experiment_id;
    const launch::SchedulerInfo& info = scheduler_.info();
    auto runsOf = [&] {
        return store::Database::open(db_path, store::Database::Mode::ReadOnly)->runs(id);
    };
    const JobProcess process = jobProcess(db_path, job);
    if (job.scheduler_job.empty() || job.exit_code) {
        say(stdout, "experiment %lld already ended: %s; nothing to cancel\n",
            static_cast<long long>(id), jobState(process, true, runsOf()).c_str());
        return kOk;
    }
    if (const std::string missing = launch::missingTools(info, {info.cancel_tool});
        !missing.empty()) {
        say(stderr, "cancel: %s\n", missing.c_str());
        return kUsage;
    }
    // Marked first: a task that leaves the queue unseen is then known to be cancelled.
    const std::string dir = arrayDir(db_path, id, info.name);
    if (const int fd = ::open(launch::cancelMark(dir).c_str(),
                              O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
        fd >= 0) {
        ::close(fd);
    }
    if (const std::string refused = scheduler_.cancel(job.scheduler_job); !refused.empty()) {
        say(stderr, "cancel: %s\n", analysis::printable(refused, false).c_str());
        return kRunsFailed;
    }
    if (process != JobProcess::Ours) {
        say(stdout,
            "experiment %lld: %s was told to cancel job %s, but its collector (pid %d) is "
            "gone: the runs it did not record read interrupted\n",
            static_cast<long long>(id), info.title.c_str(), job.scheduler_job.c_str(),
            static_cast<int>(job.pid));
        return kOk;
    }
    // The tasks hear SIGTERM (or the scheduler's warning) and end their runs
    // cancelled; the collector records
    // them and the tasks that never started, then exits.
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000));
    while (jobProcess(db_path, job) == JobProcess::Ours) {
        if (std::chrono::steady_clock::now() > deadline) {
            say(stderr,
                "cancel: %s job %s was cancelled, but experiment %lld's collector (pid %d) "
                "has not recorded its end after %g s\n",
                info.title.c_str(), job.scheduler_job.c_str(), static_cast<long long>(id),
                static_cast<int>(job.pid), timeout_s);
            return kRunsFailed;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    say(stdout, "experiment %lld cancelled (%s job %s)\n", static_cast<long long>(id),
        info.title.c_str(), job.scheduler_job.c_str());
    for (const auto& row : runsOf()) {
        say(stdout, "  run %lld %s seed %llu: %s at step %lld\n", static_cast<long long>(row.id),
            analysis::printable(row.arm, false).c_str(), static_cast<unsigned long long>(row.seed),
            run::toString(row.status).c_str(), static_cast<long long>(row.last_step));
    }
    return kOk;
}

}  // namespace

int collectToTheEnd(store::Database& db, const launch::Scheduler& scheduler, const std::string& dir,
                    const launch::TaskList& list, bool resume, const std::string& db_path,
                    Job& job) {
    int code = kRunsFailed;
    try {
        code = collectArray(db, scheduler, dir, job.scheduler_job, job.experiment_id, list, resume);
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

std::unique_ptr<Launcher> makeArrayLauncher(const launch::Scheduler& scheduler) {
    return std::make_unique<ArrayLauncher>(scheduler);
}

}  // namespace ampbench::cli
