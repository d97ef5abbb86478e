// The collector of a job array (see ArrayLauncher.cpp for the whole picture): the
// tasks' streams into the experiment's runs, a run's end from its stream and from the
// scheduler.
#include "cli/ArrayCollector.h"

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
#include "cli/Terminal.h"
#include "core/analysis/Format.h"
#include "core/config/BuildInfo.h"
#include "core/config/SpecJson.h"
#include "core/store/Database.h"
#include "core/store/NumericsStore.h"
#include "core/store/RecordStore.h"
#include "core/stream/RecordStream.h"
#include "core/train/Experiment.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace ampbench::cli {

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

namespace {

// ---------------------------------------------------------------- the collector

/// One planned run of a task, and the local run that receives its current attempt.
struct Link {
    launch::TaskRun planned;
    int64_t local = 0;
    bool started = false;
    bool ended = false;                       ///< its end is recorded in the database
    std::optional<stream::StatusRecord> end;  ///< the stream's last word, not applied yet
    std::vector<store::SequencedRecord> pending;
    std::vector<run::NumericsRecord> numerics;
    /// On resume: the runs a requeue already added for this arm and seed, oldest first.
    std::vector<int64_t> later;
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
    launch::TaskState state;
    bool known = false;
    bool terminal = false;
    int missing = 0;  ///< scheduler readings in a row that listed it nowhere
};

class Collector {
  public:
    Collector(store::Database& db, const launch::Scheduler& scheduler, std::string dir,
              std::string job_id, int64_t experiment, const launch::TaskList& list, bool resume)
        : db_(db),
          scheduler_(scheduler),
          title_(scheduler.info().title),
          dir_(std::move(dir)),
          job_id_(std::move(job_id)),
          experiment_(experiment),
          resume_(resume) {
        std::vector<store::RunRow> existing;
        if (resume_) {
            existing = db_.runs(experiment_);
        }
        for (size_t i = 0; i < list.tasks.size(); ++i) {
            TaskWatch t;
            t.index = static_cast<int>(i);
            for (const auto& r : list.tasks[i]) {
                Link link;
                link.planned = r;
                link.local = r.run_id;
                for (const auto& e : existing) {
                    if (e.id > r.run_id && e.arm_index == r.arm_index && e.seed == r.seed &&
                        e.rerun_of == 0) {
                        link.later.push_back(e.id);  // runs() lists them by id
                    }
                }
                if (resume_) {
                    takeOver(link);
                }
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
                        "%s has not answered for 30 minutes (%s); the runs not ended are "
                        "recorded interrupted\n",
                        title_.c_str(), problem_.c_str());
                    for (auto& t : tasks_) {
                        if (!t.terminal) {
                            t.terminal = true;
                            t.state.state = "UNKNOWN";
                            t.state.end = launch::TaskEnd::Failed;
                            t.state.reason = title_ + " did not answer: " + problem_;
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
    /// On resume: what the database says of the run a link records into. An end some
    /// collector recorded stays; a run the dead collector left reads running (or
    /// queued) again under this process, so readers do not show it interrupted.
    void takeOver(Link& link) {
        const auto row = db_.run(link.local);
        if (!row) {
            throw store::StoreError(store::StoreError::Kind::NotFound,
                                    db_.path() + " has no run " + std::to_string(link.local) +
                                        " of experiment " + std::to_string(experiment_) +
                                        ", which its task list names");
        }
        link.started = !row->started_at.empty() || db_.lastSeq(link.local) > 0;
        if (!store::Database::endedWithoutWriter(*row)) {
            link.ended = true;
            return;
        }
        db_.resumeRun(link.local, link.started ? run::RunStatus::Running : run::RunStatus::Queued);
        if (row->status == run::RunStatus::Interrupted) {
            say(stderr, "run %lld: taken over again (%s)\n", static_cast<long long>(link.local),
                link.started ? "running" : "queued");
        }
    }

    /// Reads what is new in every task's streams; true when anything was. Attempts
    /// are taken in order, each read to its end before the next begins: a collector
    /// started again, or one that polled late, reads every attempt into its own run.
    bool readStreams() {
        bool grew = false;
        for (auto& t : tasks_) {
            while (::access(launch::streamFile(dir_, t.index, t.attempt + 1).c_str(), F_OK) == 0) {
                const int next = t.attempt + 1;
                if (t.attempt >= 0) {
                    while (readStream(t)) {  // the earlier attempt's last rows first
                        grew = true;
                        flush();
                    }
                    flush();
                    supersede(t, next);
                }
                t.attempt = next;
                t.offset = 0;
                t.partial.clear();
                t.line = 0;
                t.refused = false;
                t.remote.clear();
                say(stderr, "%s: attempt %d streams into %s\n",
                    scheduler_.taskName(job_id_, t.index).c_str(), next,
                    launch::streamFile(dir_, t.index, next).c_str());
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
            // A collector before this one may have added the new attempt's run already.
            const bool known = !link.later.empty();
            const int64_t fresh =
                known ? link.later.front()
                      : db_.createRun(experiment_, link.planned.arm, link.planned.arm_index,
                                      link.planned.seed, link.planned.arm_json,
                                      link.planned.planned_steps, link.planned.inputs_json);
            if (known) {
                link.later.erase(link.later.begin());
            }
            if (!link.ended) {
                db_.finishRun(link.local, run::RunStatus::Interrupted,
                              scheduler_.taskName(job_id_, t.index) + " was requeued by " + title_ +
                                  " at step " + std::to_string(row ? row->last_step : 0) +
                                  "; the rows up to there are kept, and attempt " +
                                  std::to_string(attempt) + " trains it again as run " +
                                  std::to_string(fresh),
                              run::FailureKind::Interrupted);
            }
            say(stderr, "%s requeued: run %lld continues as run %lld\n",
                scheduler_.taskName(job_id_, t.index).c_str(), static_cast<long long>(link.local),
                static_cast<long long>(fresh));
            superseded_.insert(link.local);
            link.local = fresh;
            link.started = false;
            link.ended = false;
            link.end.reset();
            if (known) {
                takeOver(link);
            }
        }
    }

    bool readStream(TaskWatch& t) {
        // Opened anew each time: another host's appends show on open (NFS).
        const std::string path = launch::streamFile(dir_, t.index, t.attempt);
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
            say(stderr, "%s: %s: %s; skipped\n", scheduler_.taskName(job_id_, t.index).c_str(),
                launch::streamFile(dir_, t.index, t.attempt).c_str(),
                analysis::printable(e.what(), false).c_str());
            return;
        }
        if (auto* h = std::get_if<stream::Header>(&record)) {
            if (h->stream_version != stream::kStreamVersion) {
                say(stderr,
                    "%s: its stream is version %lld, this build reads version %d: "
                    "the task runs another ampbench-cli; its records are not read\n",
                    scheduler_.taskName(job_id_, t.index).c_str(),
                    static_cast<long long>(h->stream_version), stream::kStreamVersion);
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
            if (link && !link->started && link->ended && r->status != run::RunStatus::Queued) {
                link->started = true;  // its end is recorded: only a requeue needs to know
            } else if (link && !link->started && !link->ended &&
                       r->status != run::RunStatus::Queued) {
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
                        const auto r = store::RecordStore(db_).insertSequenced(l.local, l.pending);
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

    /// Asks the scheduler about every task; false when it could not be asked.
    bool queryScheduler() {
        const bool some_missing = std::any_of(tasks_.begin(), tasks_.end(), [](const TaskWatch& t) {
            return t.missing > 0 && !t.terminal;
        });
        // After a cancel, the accounting is asked at once: a task that left the queue
        // with a record ended as it says; one without never started.
        const bool cancelled = ::access(launch::cancelMark(dir_).c_str(), F_OK) == 0;
        const launch::ArrayView view =
            scheduler_.query(job_id_, some_missing || cancelled, memory_);
        if (!view.answered) {
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
                    say(stderr, "%s: %s%s%s%s%s\n", scheduler_.taskName(job_id_, t.index).c_str(),
                        it->second.state.c_str(),
                        it->second.reason.empty() || it->second.reason == "None" ? "" : " (",
                        it->second.reason == "None" ? "" : it->second.reason.c_str(),
                        it->second.reason.empty() || it->second.reason == "None" ? "" : ")",
                        it->second.node.empty() ? "" : (" on " + it->second.node).c_str());
                }
                t.state = it->second;
                t.known = true;
                t.missing = 0;
                t.terminal = t.state.end != launch::TaskEnd::None;
            } else if (cancelled) {
                // Cancelled, and gone from the queue: a task that never started leaves
                // no record of its end, and one that ran has told its end in its stream.
                t.terminal = true;
                t.state.state = "CANCELLED";
                t.state.end = launch::TaskEnd::Cancelled;
                t.state.reason = "cancelled with " + scheduler_.info().cancel_tool;
            } else if (++t.missing >= scheduler_.readingsBeforeForgotten()) {
                // Neither the queue nor the accounting lists it: it ended long enough ago
                // for the scheduler to forget it, and no accounting keeps it.
                t.terminal = true;
                if (!t.known) {
                    t.state.state = "UNKNOWN";
                }
                t.state.reason = title_ + " no longer lists it";
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
                // A cancel the task heard may have been the user's, the time limit or a
                // preemption: only the scheduler's state tells, once the task has ended.
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
        const std::string name = scheduler_.taskName(job_id_, t.index);
        const std::string state = t.known ? t.state.state : std::string("UNKNOWN");
        const launch::TaskEnd end = t.state.end;
        const std::string cancel_tool = scheduler_.info().cancel_tool;
        if (link.end && link.end->status != RunStatus::Cancelled) {
            return {link.end->status, link.end->failure, link.end->error};
        }
        const auto row = db_.run(link.local);
        // Rows here mean that it trained, even if its start could not be written.
        const bool started = link.started || db_.lastSeq(link.local) > 0;
        const std::string at_step = " at step " + std::to_string(row ? row->last_step : 0) +
                                    "; the rows it streamed are kept";
        if (end == launch::TaskEnd::TimedOut) {
            return {RunStatus::Interrupted, FailureKind::Interrupted,
                    name + " ran past its time limit (" +
                        (t.state.time_limit.empty() ? time_limit_ : t.state.time_limit) + ") and " +
                        title_ + " stopped it" +
                        (started ? at_step : std::string(" before the run started"))};
        }
        if (end == launch::TaskEnd::Preempted) {
            return {RunStatus::Interrupted, FailureKind::Interrupted,
                    name + " was preempted by " + title_ +
                        (started ? at_step : std::string(" before the run started"))};
        }
        if (end == launch::TaskEnd::Cancelled || link.end) {
            std::string error = link.end && !link.end->error.empty() ? link.end->error
                                : started
                                    ? "cancelled (" + cancel_tool + ") while it trained"
                                    : "cancelled (" + cancel_tool + ") before its task started";
            return {RunStatus::Cancelled, FailureKind::Cancelled, error};
        }
        std::string how = title_ + ": " + state;
        if (!t.state.exit_code.empty()) {
            how += ", exit code " + t.state.exit_code;
        }
        if (!t.state.reason.empty() && t.state.reason != "None") {
            how += ", " + t.state.reason;
        }
        if (!started) {
            const std::string said = outputTail(launch::taskOutput(dir_, t.index));
            return {RunStatus::Failed, FailureKind::Runtime,
                    name + " ended (" + how + ") before its run started" +
                        (said.empty() ? std::string() : "; its output: " + said)};
        }
        return {RunStatus::Interrupted, FailureKind::Interrupted,
                name + " ended (" + how + ") before its run ended" + at_step};
    }

    store::Database& db_;
    const launch::Scheduler& scheduler_;
    std::string title_;
    std::string dir_;
    std::string job_id_;
    int64_t experiment_;
    bool resume_ = false;
    std::string time_limit_;
    std::vector<TaskWatch> tasks_;
    launch::QueryMemory memory_;
    std::string problem_;
    std::set<int64_t> superseded_;  ///< runs whose task was requeued after they started
};

}  // namespace

int collectArray(store::Database& db, const launch::Scheduler& scheduler, const std::string& dir,
                 const std::string& job_id, int64_t experiment, const launch::TaskList& list,
                 bool resume) {
    return Collector(db, scheduler, dir, job_id, experiment, list, resume).run();
}

}  // namespace ampbench::cli
