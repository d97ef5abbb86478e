// `launch --slurm`, and `status` and `cancel` of what it started: an experiment's runs
// as one Slurm job array, a task per run.
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

std::string selfExecutable() {
    std::error_code ec;
    const fs::path self = fs::read_symlink("/proc/self/exe", ec);
    return ec ? std::string("ampbench-cli") : self.string();
}

/// The last lines of a task's output (what it said before it ended), at most ~600 bytes.
std::string outputTail(const std::string& path) {
    std::string text = readText(path);
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) {
        text.pop_back();
    }
    if (text.size() > 600) {
        text = "..." + text.substr(text.size() - 600);
    }
    return analysis::printable(text, false);
}

/// Slurm's name for a task of the array.
std::string taskName(const std::string& job_id, int task) {
    return "Slurm task " + job_id + "_" + std::to_string(task);
}

/// Names the missing tool and what to do; empty when every one is on PATH.
std::string missingTools(std::initializer_list<const char*> tools) {
    for (const char* tool : tools) {
        if (slurm::findProgram(tool).empty()) {
            const char* path = std::getenv("PATH");
            return std::string("this host has no Slurm client tools: `") + tool +
                   "` is not on PATH (" + (path ? path : "PATH is not set") +
                   "); run it on the cluster's login host, or put Slurm's bin folder on PATH";
        }
    }
    return {};
}

// ---------------------------------------------------------------- the collector

/// One planned run of a task, and the local run that receives its current attempt.
struct Link {
    slurm::TaskRun planned;
    int64_t local = 0;
    bool started = false;
    bool ended = false;                       ///< its end is recorded in the database
    std::optional<stream::StatusRecord> end;  ///< the stream's last word, not applied yet
    std::vector<store::SequencedRecord> pending;
    std::vector<run::NumericsRecord> numerics;
};

struct TaskWatch {
    int index = 0;
    std::vector<Link> runs;
    int attempt = -1;
    int64_t offset = 0;
    std::string partial;
    int64_t line = 0;
    bool refused = false;
    std::map<int64_t, size_t> remote;  ///< the stream's run id -> runs[]
    slurm::TaskState state;
    bool known = false;
    bool terminal = false;
    int missing = 0;  ///< scheduler readings in a row that listed it nowhere
};

class Collector {
  public:
    Collector(store::Database& db, std::string dir, std::string job_id, int64_t experiment,
              const slurm::TaskList& list)
        : db_(db), dir_(std::move(dir)), job_id_(std::move(job_id)), experiment_(experiment) {
        for (size_t i = 0; i < list.tasks.size(); ++i) {
            TaskWatch t;
            t.index = static_cast<int>(i);
            for (const auto& r : list.tasks[i]) {
                Link link;
                link.planned = r;
                link.local = r.run_id;
                t.runs.push_back(std::move(link));
            }
            tasks_.push_back(std::move(t));
        }
        time_limit_ = list.time_limit;
    }

    /// Collects until every task has ended; the exit code of the experiment.
    int run() {
        auto last_query = std::chrono::steady_clock::now() - std::chrono::hours(1);
        auto unanswered_since = std::chrono::steady_clock::now();
        for (;;) {
            readStreams();
            flush();
            const auto now = std::chrono::steady_clock::now();
            if (now - last_query >= std::chrono::seconds(2)) {
                last_query = now;
                if (queryScheduler()) {
                    unanswered_since = now;
                } else if (now - unanswered_since > std::chrono::minutes(30)) {
                    say(stderr,
                        "Slurm's controller has not answered for 30 minutes (%s); the "
                        "runs not ended are recorded interrupted\n",
                        problem_.c_str());
                    for (auto& t : tasks_) {
                        if (!t.terminal) {
                            t.terminal = true;
                            t.state.state = "UNKNOWN";
                            t.state.reason = "the controller did not answer: " + problem_;
                        }
                    }
                }
            }
            settle(false);
            if (std::all_of(tasks_.begin(), tasks_.end(),
                            [](const TaskWatch& t) { return t.terminal; })) {
                break;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(250));
        }
        // Every task has ended: what they streamed is complete once the files stop
        // growing (a shared file system may show the last writes late).
        for (int quiet = 0, rounds = 0; quiet < 2 && rounds < 40; ++rounds) {
            quiet = readStreams() ? 0 : quiet + 1;
            flush();
            std::this_thread::sleep_for(std::chrono::milliseconds(250));
        }
        settle(true);
        bool cancelled = false, failed = false;
        for (const auto& r : db_.runs(experiment_)) {
            cancelled |= r.status == run::RunStatus::Cancelled;
            // A run a requeue superseded is told by the attempt after it.
            failed |= r.status != run::RunStatus::Finished &&
                      r.status != run::RunStatus::Cancelled && superseded_.count(r.id) == 0;
            say(stderr, "run %lld %s seed %llu: %s at step %lld%s%s\n",
                static_cast<long long>(r.id), analysis::printable(r.arm, false).c_str(),
                static_cast<unsigned long long>(r.seed), run::toString(r.status).c_str(),
                static_cast<long long>(r.last_step), r.error.empty() ? "" : ": ",
                analysis::printable(r.error, false).c_str());
        }
        if (!cancelled) {
            printVerdicts(db_, experiment_);
        }
        return cancelled ? kCancelled : failed ? kRunsFailed : kOk;
    }

  private:
    /// Reads what is new in every task's newest stream; true when anything was.
    bool readStreams() {
        bool grew = false;
        for (auto& t : tasks_) {
            int newest = t.attempt;
            while (newest < t.attempt + 1000 &&
                   ::access(slurm::streamFile(dir_, t.index, newest + 1).c_str(), F_OK) == 0) {
                ++newest;
            }
            if (newest > t.attempt) {
                if (t.attempt >= 0) {
                    grew |= readStream(t);  // the earlier attempt's last rows first
                    flush();
                    supersede(t, newest);
                }
                t.attempt = newest;
                t.offset = 0;
                t.partial.clear();
                t.line = 0;
                t.refused = false;
                t.remote.clear();
                say(stderr, "%s: attempt %d streams into %s\n", taskName(job_id_, t.index).c_str(),
                    newest, slurm::streamFile(dir_, t.index, newest).c_str());
            }
            if (t.attempt >= 0) {
                grew |= readStream(t);
            }
        }
        return grew;
    }

    /// A requeued task trains its runs again: a run that started keeps the rows of
    /// the attempt before and ends interrupted; the new attempt records into a new
    /// run of the same arm and seed.
    void supersede(TaskWatch& t, int attempt) {
        for (auto& link : t.runs) {
            if (!link.started) {
                continue;
            }
            const auto row = db_.run(link.local);
            const int64_t fresh = db_.createRun(
                experiment_, link.planned.arm, link.planned.arm_index, link.planned.seed,
                link.planned.arm_json, link.planned.planned_steps, link.planned.inputs_json);
            if (!link.ended) {
                db_.finishRun(link.local, run::RunStatus::Interrupted,
                              taskName(job_id_, t.index) + " was requeued by Slurm at step " +
                                  std::to_string(row ? row->last_step : 0) +
                                  "; the rows up to there are kept, and attempt " +
                                  std::to_string(attempt) + " trains it again as run " +
                                  std::to_string(fresh),
                              run::FailureKind::Interrupted);
            }
            say(stderr, "%s requeued: run %lld continues as run %lld\n",
                taskName(job_id_, t.index).c_str(), static_cast<long long>(link.local),
                static_cast<long long>(fresh));
            superseded_.insert(link.local);
            link.local = fresh;
            link.started = false;
            link.ended = false;
            link.end.reset();
        }
    }

    bool readStream(TaskWatch& t) {
        // Opened anew each time: another host's appends show on open (NFS).
        const std::string path = slurm::streamFile(dir_, t.index, t.attempt);
        const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0) {
            return false;
        }
        struct stat st {};
        bool grew = false;
        if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > t.offset) {
            std::string chunk(
                static_cast<size_t>(std::min<int64_t>(st.st_size - t.offset, 8 << 20)), '\0');
            const ssize_t n = ::pread(fd, chunk.data(), chunk.size(), t.offset);
            if (n > 0) {
                grew = true;
                t.offset += n;
                t.partial.append(chunk.data(), static_cast<size_t>(n));
                size_t start = 0;
                for (size_t nl; (nl = t.partial.find('\n', start)) != std::string::npos;
                     start = nl + 1) {
                    line(t, t.partial.substr(start, nl - start));
                }
                t.partial.erase(0, start);
            }
        }
        ::close(fd);
        return grew;
    }

    void line(TaskWatch& t, const std::string& text) {
        ++t.line;
        if (t.refused || text.find_first_not_of(" \t\r") == std::string::npos) {
            return;
        }
        stream::Record record;
        try {
            record = stream::decode(text, t.line);
        } catch (const stream::StreamError& e) {
            say(stderr, "%s: %s: %s; skipped\n", taskName(job_id_, t.index).c_str(),
                slurm::streamFile(dir_, t.index, t.attempt).c_str(),
                analysis::printable(e.what(), false).c_str());
            return;
        }
        if (auto* h = std::get_if<stream::Header>(&record)) {
            if (h->stream_version != stream::kStreamVersion) {
                say(stderr,
                    "%s: its stream is version %lld, this build reads version %d: "
                    "the task runs another ampbench-cli; its records are not read\n",
                    taskName(job_id_, t.index).c_str(), static_cast<long long>(h->stream_version),
                    stream::kStreamVersion);
                t.refused = true;
            }
        } else if (auto* r = std::get_if<store::RunRow>(&record)) {
            Link* link = nullptr;
            for (size_t i = 0; i < t.runs.size(); ++i) {
                if (t.runs[i].planned.arm_index == r->arm_index &&
                    t.runs[i].planned.seed == r->seed) {
                    t.remote[r->id] = i;
                    link = &t.runs[i];
                }
            }
            if (link && !link->started && !link->ended && r->status != run::RunStatus::Queued) {
                try {
                    db_.markRunning(link->local, r->env_json);
                    link->started = true;
                } catch (const store::StoreError& e) {
                    // Tried again with the run's next record; its end is written regardless.
                    say(stderr, "marking run %lld running waits: %s\n",
                        static_cast<long long>(link->local), e.what());
                }
            }
        } else if (auto* row = std::get_if<stream::RowRecord>(&record)) {
            if (Link* link = linkOf(t, row->run)) {
                link->pending.push_back(std::move(row->row));
            }
        } else if (auto* g = std::get_if<stream::NumericsGroup>(&record)) {
            if (Link* link = linkOf(t, g->run)) {
                for (auto& n : g->rows) {
                    n.step = g->step;
                    link->numerics.push_back(std::move(n));
                }
            }
        } else if (auto* s = std::get_if<stream::StatusRecord>(&record)) {
            Link* link = linkOf(t, s->run);
            if (link && s->status != run::RunStatus::Running &&
                s->status != run::RunStatus::Queued) {
                link->end = *s;
            }
        }
    }

    Link* linkOf(TaskWatch& t, int64_t remote_run) {
        const auto it = t.remote.find(remote_run);
        return it == t.remote.end() ? nullptr : &t.runs[it->second];
    }

    /// Writes the rows held, in one transaction; kept for the next try when another
    /// program holds the database's lock past the usual wait.
    void flush() {
        bool any = false;
        for (const auto& t : tasks_) {
            for (const auto& l : t.runs) {
                any |= !l.pending.empty() || !l.numerics.empty();
            }
        }
        if (!any) {
            return;
        }
        try {
            db_.begin();
            std::vector<std::string> conflicts;
            for (auto& t : tasks_) {
                for (auto& l : t.runs) {
                    if (!l.pending.empty()) {
                        const auto r = db_.insertSequenced(l.local, l.pending);
                        for (const auto& c : r.conflicts) {
                            conflicts.push_back("run " + std::to_string(l.local) + ": " +
                                                c.problem);
                        }
                    }
                    if (!l.numerics.empty()) {
                        store::NumericsStore(db_).insert(l.local, l.numerics);
                    }
                }
            }
            db_.commit();
            for (auto& t : tasks_) {
                for (auto& l : t.runs) {
                    l.pending.clear();
                    l.numerics.clear();
                }
            }
            for (const auto& c : conflicts) {
                say(stderr, "%s; the row stored is kept\n", analysis::printable(c, false).c_str());
            }
        } catch (const store::StoreError& e) {
            try {
                db_.rollback();
            } catch (const store::StoreError&) {
            }
            say(stderr, "writing the streamed rows waits: %s\n", e.what());
        }
    }

    /// Asks Slurm about every task; false when it could not be asked.
    bool queryScheduler() {
        const bool some_missing = std::any_of(tasks_.begin(), tasks_.end(), [](const TaskWatch& t) {
            return t.missing > 0 && !t.terminal;
        });
        const slurm::ArrayView view = slurm::queryArray(job_id_, some_missing, &accounting_);
        if (!view.squeue_ok) {
            problem_ = view.problem;
            return false;
        }
        for (auto& t : tasks_) {
            if (t.terminal) {
                continue;
            }
            const auto it = view.tasks.find(t.index);
            if (it != view.tasks.end()) {
                if (!t.known || it->second.state != t.state.state ||
                    it->second.reason != t.state.reason) {
                    say(stderr, "%s: %s%s%s%s%s\n", taskName(job_id_, t.index).c_str(),
                        it->second.state.c_str(),
                        it->second.reason.empty() || it->second.reason == "None" ? "" : " (",
                        it->second.reason == "None" ? "" : it->second.reason.c_str(),
                        it->second.reason.empty() || it->second.reason == "None" ? "" : ")",
                        it->second.node.empty() ? "" : (" on " + it->second.node).c_str());
                }
                t.state = it->second;
                t.known = true;
                t.missing = 0;
                t.terminal = slurm::terminalState(t.state.state);
            } else if (++t.missing >= 3) {
                // Neither squeue nor sacct lists it: it ended long enough ago for the
                // controller to forget it, and no accounting keeps it.
                t.terminal = true;
                if (!t.known) {
                    t.state.state = "UNKNOWN";
                }
                t.state.reason = "Slurm no longer lists it";
            }
        }
        return true;
    }

    /// Records the end of each run whose end is known; with `final`, of every run.
    void settle(bool final) {
        for (auto& t : tasks_) {
            for (auto& link : t.runs) {
                if (link.ended || (!link.end && !final)) {
                    continue;
                }
                const bool stream_cancelled =
                    link.end && link.end->status == run::RunStatus::Cancelled;
                // A cancel the task heard may have been scancel, the time limit or a
                // preemption: only Slurm's state tells, once the task has ended.
                if (!final && stream_cancelled && !t.terminal) {
                    continue;
                }
                flush();
                const auto [status, failure, error] = ending(t, link);
                db_.finishRun(link.local, status, error, failure);
                link.ended = true;
            }
        }
    }

    struct Ending {
        run::RunStatus status;
        run::FailureKind failure;
        std::string error;
    };

    Ending ending(const TaskWatch& t, const Link& link) const {
        using run::FailureKind;
        using run::RunStatus;
        const std::string name = taskName(job_id_, t.index);
        const std::string state = t.known ? t.state.state : std::string("UNKNOWN");
        if (link.end && link.end->status != RunStatus::Cancelled) {
            return {link.end->status, link.end->failure, link.end->error};
        }
        const auto row = db_.run(link.local);
        // Rows here mean that it trained, even if its start could not be written.
        const bool started = link.started || db_.lastSeq(link.local) > 0;
        const std::string at_step = " at step " + std::to_string(row ? row->last_step : 0) +
                                    "; the rows it streamed are kept";
        if (state == "TIMEOUT") {
            return {RunStatus::Interrupted, FailureKind::Interrupted,
                    name + " ran past its time limit (" +
                        (t.state.time_limit.empty() ? time_limit_ : t.state.time_limit) +
                        ") and Slurm stopped it" +
                        (started ? at_step : std::string(" before the run started"))};
        }
        if (state == "PREEMPTED") {
            return {RunStatus::Interrupted, FailureKind::Interrupted,
                    name + " was preempted by Slurm" +
                        (started ? at_step : std::string(" before the run started"))};
        }
        if (state == "CANCELLED" || link.end) {
            std::string error = link.end && !link.end->error.empty() ? link.end->error
                                : started ? "cancelled (scancel) while it trained"
                                          : "cancelled (scancel) before its task started";
            return {RunStatus::Cancelled, FailureKind::Cancelled, error};
        }
        std::string how = "Slurm: " + state;
        if (!t.state.exit_code.empty()) {
            how += ", exit code " + t.state.exit_code;
        }
        if (!t.state.reason.empty() && t.state.reason != "None") {
            how += ", " + t.state.reason;
        }
        if (!started) {
            const std::string said = outputTail(slurm::taskOutput(dir_, t.index));
            return {RunStatus::Failed, FailureKind::Runtime,
                    name + " ended (" + how + ") before its run started" +
                        (said.empty() ? std::string() : "; its output: " + said)};
        }
        return {RunStatus::Interrupted, FailureKind::Interrupted,
                name + " ended (" + how + ") before its run ended" + at_step};
    }

    store::Database& db_;
    std::string dir_;
    std::string job_id_;
    int64_t experiment_;
    std::string time_limit_;
    std::vector<TaskWatch> tasks_;
    bool accounting_ = true;
    std::string problem_;
    std::set<int64_t> superseded_;  ///< runs whose task was requeued after they started
};

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
            list.tasks.push_back({t});
        }
        writePrivateFile(slurm::taskListFile(dir), slurm::taskListText(list));
        writePrivateFile(slurm::batchScript(dir),
                         "#!/bin/sh\n# Experiment " + std::to_string(id) + " of " + db_path +
                             ": one task per run (written by ampbench-cli launch --slurm)\nexec " +
                             slurm::shellQuote(selfExecutable()) + " slurm-task --dir " +
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
    say(stderr, "experiment %lld '%s': %zu runs as Slurm job array %s, recording to %s\n",
        static_cast<long long>(id), analysis::printable(spec.name, false).c_str(), plan.runs.size(),
        job_id.c_str(), db_path.c_str());
    tell("planned " + std::to_string(id));
    int code = kRunsFailed;
    try {
        code = Collector(*db, dir, job_id, id, list).run();
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
    if (valid.spec().runs_per_gpu > 1) {
        say(stderr,
            "launch --slurm: runs_per_gpu is %d, but each run is a task of its own; ask Slurm "
            "to share a GPU between tasks (GRES sharing or MPS, --sbatch-option) to pack them\n",
            valid.spec().runs_per_gpu);
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

std::unique_ptr<Launcher> makeSlurmLauncher() {
    return std::make_unique<SlurmLauncher>();
}

}  // namespace ampbench::cli
