// `ampbench-cli array-task` (once `slurm-task`): one task of a job array that `launch
// --<scheduler>` submitted, on its compute node. It never opens the experiment's
// database (SQLite's WAL needs one host's shared memory, and cluster file systems lock
// badly): it trains its runs (one, or a group of runs_per_gpu runs side by side, as
// `run` packs them on a GPU) into a scratch database on the node's own disk and writes
// their record stream into the jobs folder, where the collector on the login host
// ingests it. Each attempt (a requeue, a preemption) writes a stream of its own, so a
// requeued task starts a new stream instead of repeating rows of the old one.
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <thread>

#include "cli/Commands.h"
#include "cli/ExitCodes.h"
#include "cli/Interrupt.h"
#include "cli/Launcher.h"
#include "cli/RunHooks.h"
#include "cli/Terminal.h"
#include "core/analysis/Format.h"
#include "core/config/SpecJson.h"
#include "core/config/Validation.h"
#include "core/launch/Scheduler.h"
#include "core/launch/TaskList.h"
#include "core/probe/Environment.h"
#include "core/run/RemoveTree.h"
#include "core/script/Trainers.h"
#include "core/store/Database.h"
#include "core/stream/RecordStream.h"
#include "core/stream/Tail.h"
#include "core/train/Experiment.h"

namespace ampbench::cli {
namespace {

bool writeLine(int fd, const std::string& line) {
    size_t done = 0;
    while (done < line.size()) {
        const ssize_t n = ::write(fd, line.data() + done, line.size() - done);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return false;
        }
        done += static_cast<size_t>(n);
    }
    return true;
}

/// Streams the scratch database's runs into `fd` until they have all ended and
/// `stop` is set. Each batch is synced, so that the login host (another NFS
/// client) sees it on its next open of the file.
void streamRuns(const std::string& scratch_db, std::vector<int64_t> runs, int fd,
                const std::atomic<bool>& stop, std::string& problem) {
    try {
        auto db = store::Database::open(scratch_db, store::Database::Mode::ReadOnly);
        bool ok =
            writeLine(fd, stream::encode(stream::makeHeader(
                              probe::toJson(probe::probeEnvironment("cpu")), db->databaseId())) +
                              "\n");
        stream::Tail tail(*db, std::move(runs));
        std::string batch;
        const auto sink = [&](const stream::Record& r) { batch += stream::encode(r) + "\n"; };
        for (;;) {
            const bool stopping = stop.load();
            const bool done = tail.poll(sink);
            if (stopping && !done) {
                tail.closeAll(sink);
            }
            if (!batch.empty()) {
                ok = ok && writeLine(fd, batch);
                ::fdatasync(fd);
                batch.clear();
            }
            if (!ok) {
                problem = std::string("cannot write the record stream: ") + std::strerror(errno);
                return;
            }
            if (done || stopping) {
                return;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(200));
        }
    } catch (const std::exception& e) {
        problem = std::string("the record stream stopped: ") + e.what();
    }
}

std::string hostName() {
    char name[256] = {};
    ::gethostname(name, sizeof name - 1);
    return name;
}

}  // namespace

int commandArrayTask(const std::string& dir, int task, int first_attempt) {
    launch::TaskList list;
    try {
        list = launch::readTaskList(launch::taskListFile(dir));
    } catch (const std::exception& e) {
        say(stderr, "array-task: %s\n", e.what());
        return kUsage;
    }
    // Lists written before they named their scheduler are Slurm's.
    const launch::Scheduler* scheduler =
        launch::schedulerNamed(list.scheduler.empty() ? "slurm" : list.scheduler);
    if (scheduler == nullptr) {
        say(stderr, "array-task: %s names the scheduler \"%s\", which this build does not know\n",
            launch::taskListFile(dir).c_str(), list.scheduler.c_str());
        return kUsage;
    }
    if (task < 0 || task >= static_cast<int>(list.tasks.size())) {
        say(stderr, "array-task: --task %d: experiment %lld has tasks 0 to %zu\n", task,
            static_cast<long long>(list.experiment_id), list.tasks.size() - 1);
        return kUsage;
    }
    std::vector<config::FieldError> errors;
    const config::ExperimentSpec spec = config::specFromJsonText(list.spec_json, errors);
    std::optional<config::ValidSpec> valid;
    if (errors.empty()) {
        valid = config::ValidSpec::check(spec, errors);
    }
    if (!valid) {
        printErrors(
            "array-task: the experiment's spec in " + launch::taskListFile(dir) + " has errors",
            errors, spec.arms);
        return kUsage;
    }
    // The scheduler's restart count, where it keeps one, is the first name tried; a
    // name an earlier attempt took is passed over.
    int attempt = std::max(0, first_attempt);
    int fd = -1;
    for (int tries = 0; tries < 1000 && fd < 0; ++tries, ++attempt) {
        fd = ::open(launch::streamFile(dir, task, attempt).c_str(),
                    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_APPEND | O_CLOEXEC, 0600);
        if (fd < 0 && errno != EEXIST) {
            say(stderr, "array-task: cannot create %s: %s\n",
                launch::streamFile(dir, task, attempt).c_str(), std::strerror(errno));
            return kIoError;
        }
    }
    --attempt;
    if (fd < 0) {
        say(stderr, "array-task: every stream name of task %d in %s is taken\n", task, dir.c_str());
        return kIoError;
    }
    const char* tmp = std::getenv("TMPDIR");
    std::string scratch = std::string(tmp && *tmp ? tmp : "/tmp") + "/ampbench-task-XXXXXX";
    if (::mkdtemp(scratch.data()) == nullptr) {
        say(stderr, "array-task: cannot create a scratch folder %s on this node: %s\n",
            scratch.c_str(), std::strerror(errno));
        ::close(fd);
        return kIoError;
    }
    const std::string scratch_db = scratch + "/task.db";
    int code = kOk;
    std::string stream_problem;
    {
        auto db = store::Database::open(scratch_db);
        const int64_t experiment = db->createExperiment(list.experiment_name, list.spec_json);
        std::vector<train::PlannedRun> runs;
        std::vector<int64_t> ids;
        std::map<int64_t, int64_t> login_id;  ///< scratch run -> the run on the login host
        // The node plans its runs on its own device: the login host that planned the
        // array may have no GPU where the node has one.
        const train::DeviceChoice device = train::chooseDevice(valid->spec().device);
        for (const auto& r : list.tasks[static_cast<size_t>(task)]) {
            train::PlannedRun p;
            static_cast<train::RunPlan&>(p) =
                train::planRun(valid->spec(), r.arm_index, r.seed, device);
            p.run_id = db->createRun(experiment, r.arm, r.arm_index, r.seed, r.arm_json,
                                     r.planned_steps, r.inputs_json);
            p.arm = r.arm;
            p.planned_steps = r.planned_steps;
            runs.push_back(p);
            ids.push_back(p.run_id);
            login_id[p.run_id] = r.run_id;
            say(stderr, "task %d attempt %d (pid %d) on %s: run %lld %s seed %llu, stream %s\n",
                task, attempt, static_cast<int>(::getpid()), hostName().c_str(),
                static_cast<long long>(r.run_id), analysis::printable(r.arm, false).c_str(),
                static_cast<unsigned long long>(r.seed),
                launch::streamFile(dir, task, attempt).c_str());
        }
        std::atomic<bool> stop{false};
        std::thread streamer(streamRuns, scratch_db, ids, fd, std::cref(stop),
                             std::ref(stream_problem));
        run::CancelToken cancel;
        {
            // A cancel, a requeue and the time limit send SIGTERM, or the scheduler's
            // warning that a kill follows: the runs stop between micro-batches and say
            // so, with every row recorded. Its other warnings (a suspend) end nothing.
            InterruptScope interrupt(cancel, scheduler->stopSignals());
            for (int ignored : scheduler->ignoredSignals()) {
                std::signal(ignored, SIG_IGN);
            }
            // The task's runs train as `run` trains them: a packed group side by side
            // on the task's GPU, one at a time on a CPU.
            RunHooks::Options options;  // the login host checked the set-up before planning
            options.spec = &valid->spec();
            options.quiet = true;
            options.finished = [&](const train::PlannedRun& p, const run::RunOutcome& out) {
                say(stderr, "run %lld: %s%s%s\n", static_cast<long long>(login_id.at(p.run_id)),
                    run::toString(out.status).c_str(), out.error.empty() ? "" : ": ",
                    analysis::printable(out.error, false).c_str());
            };
            RunHooks hooks(std::move(options));
            train::ExperimentPlan plan;
            plan.experiment_id = experiment;
            plan.device = device;
            plan.runs = runs;
            bool failed = false;
            bool cancelled = false;
            try {
                const train::ExperimentResult result =
                    script::trainPlannedRuns(*db, *valid, plan, cancel, hooks.hooks());
                failed = result.any_failed;
                cancelled = result.cancelled;
            } catch (const std::exception& e) {
                // Every run it left unended fails with its words; the rows stay.
                for (const auto& p : runs) {
                    const auto row = db->run(p.run_id);
                    if (row && (row->status == run::RunStatus::Queued ||
                                row->status == run::RunStatus::Running)) {
                        say(stderr, "run %lld: %s\n", static_cast<long long>(login_id.at(p.run_id)),
                            e.what());
                        db->finishRun(p.run_id, run::RunStatus::Failed, e.what(),
                                      run::FailureKind::Runtime);
                    }
                }
                failed = true;
            }
            code = cancelled || cancel.cancelled() ? kCancelled : failed ? kRunsFailed : kOk;
        }
        stop = true;
        streamer.join();
    }
    ::fsync(fd);
    ::close(fd);
    run::removeTree(scratch);
    if (!stream_problem.empty()) {
        say(stderr, "array-task: %s\n", stream_problem.c_str());
        return kIoError;
    }
    return code;
}

}  // namespace ampbench::cli
