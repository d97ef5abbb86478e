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
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "cli/Commands.h"
#include "cli/ExitCodes.h"
#include "cli/Interrupt.h"
#include "cli/Progress.h"
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

std::string jobsDir(const std::string& db_path) {
    return db_path + ".jobs";
}
std::string jobFile(const std::string& db_path, int64_t id) {
    return jobsDir(db_path) + "/" + std::to_string(id) + ".json";
}
/// Held (an fcntl write lock) by a job for as long as it runs: only the process
/// that holds it is the experiment's job, whatever pid a job file names.
std::string jobLockFile(const std::string& db_path, int64_t id) {
    return jobsDir(db_path) + "/" + std::to_string(id) + ".lock";
}

/// A jobs folder or a job file that cannot be used; the message names it (exit 6).
class JobFileError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

std::string kindOf(mode_t mode) {
    if (S_ISLNK(mode)) {
        return "a symbolic link";
    }
    if (S_ISDIR(mode)) {
        return "a folder";
    }
    if (S_ISFIFO(mode)) {
        return "a FIFO (named pipe)";
    }
    if (S_ISCHR(mode)) {
        return "a character device";
    }
    if (S_ISBLK(mode)) {
        return "a block device";
    }
    if (S_ISSOCK(mode)) {
        return "a socket";
    }
    return "not a regular file";
}

/// The jobs folder beside the database, private to this user: created with mode
/// 0700 when `create`; refused when it is a link, not a folder, someone else's or
/// writable by others, since its files decide which process `cancel` signals.
/// False (and nothing created) when it does not exist and `create` is false.
bool checkJobsDir(const std::string& db_path, bool create) {
    const std::string dir = jobsDir(db_path);
    struct stat st {};
    if (::lstat(dir.c_str(), &st) != 0) {
        if (errno != ENOENT) {
            throw JobFileError("cannot use the jobs folder " + dir + ": " + std::strerror(errno));
        }
        if (!create) {
            return false;
        }
        if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
            throw JobFileError("cannot create the jobs folder " + dir + ": " +
                               std::strerror(errno));
        }
        if (::lstat(dir.c_str(), &st) != 0) {
            throw JobFileError("cannot use the jobs folder " + dir + ": " + std::strerror(errno));
        }
    }
    std::string problem;
    if (!S_ISDIR(st.st_mode)) {
        problem = "it is " + kindOf(st.st_mode) + ", not a folder";
    } else if (st.st_uid != ::geteuid()) {
        problem = "it belongs to another user (uid " + std::to_string(st.st_uid) + ")";
    } else if ((st.st_mode & 022) != 0) {
        char mode[8];
        std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
        problem = std::string("other users can write into it (mode ") + mode + ")";
    }
    if (!problem.empty()) {
        throw JobFileError("refusing the jobs folder " + dir + ": " + problem +
                           "; job files live only in a folder of your own (mode 0700): remove "
                           "it, or give --db another file");
    }
    return true;
}

/// What a job file says: written by the job when it planned its experiment, and
/// again with its exit code when it ended.
struct Job {
    int64_t experiment_id = 0;
    pid_t pid = 0;
    long long pid_start = 0;
    std::string log;
    std::string db;
    std::string device;
    int64_t runs = 0;
    int64_t started_at = 0;
    std::optional<int> exit_code;
    int64_t ended_at = 0;
};

json toJson(const Job& job) {
    json j = {{"experiment_id", job.experiment_id},
              {"pid", static_cast<int>(job.pid)},
              {"pid_start", job.pid_start},
              {"log", job.log},
              {"db", job.db},
              {"device", job.device},
              {"runs", job.runs},
              {"started_at", job.started_at}};
    if (job.exit_code) {
        j["exit_code"] = *job.exit_code;
        j["ended_at"] = job.ended_at;
    }
    return j;
}

std::string typeName(const json& value) {
    if (value.is_number_integer()) {
        return "a whole number (" + value.dump() + ")";
    }
    if (value.is_number()) {
        return "a fractional number (" + value.dump() + ")";
    }
    if (value.is_string()) {
        std::string text = value.get<std::string>();
        if (text.size() > 40) {
            text = text.substr(0, 40) + "...";
        }
        return "a string (\"" + text + "\")";
    }
    return std::string("a JSON ") + value.type_name();
}

/// The job file at `path`: nullopt when there is none. Anything but a regular file
/// (a FIFO would block the reader, a link could lead anywhere), text that is not
/// JSON, or a field of the wrong type is a JobFileError naming the file and field.
std::optional<Job> readJob(const std::string& path, int64_t id) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT) {
            return std::nullopt;
        }
        if (errno == ELOOP) {
            throw JobFileError("job file " + path +
                               " is a symbolic link; a job file is a regular file in the jobs "
                               "folder: remove the link");
        }
        throw JobFileError("cannot read job file " + path + ": " + std::strerror(errno));
    }
    struct stat st {};
    std::string text;
    std::string problem;
    if (::fstat(fd, &st) != 0) {
        problem = std::strerror(errno);
    } else if (!S_ISREG(st.st_mode)) {
        problem = "it is " + kindOf(st.st_mode) + ", not a regular file: remove it";
    } else if (st.st_size > (1 << 20)) {
        problem = "it is " + std::to_string(st.st_size) + " bytes, far more than a job file holds";
    } else {
        char buf[4096];
        for (;;) {
            const ssize_t n = ::read(fd, buf, sizeof buf);
            if (n < 0 && errno == EINTR) {
                continue;
            }
            if (n < 0) {
                problem = std::strerror(errno);
            }
            if (n <= 0) {
                break;
            }
            text.append(buf, static_cast<size_t>(n));
        }
    }
    ::close(fd);
    if (!problem.empty()) {
        throw JobFileError("cannot read job file " + path + ": " + problem);
    }
    const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object()) {
        throw JobFileError("job file " + path + " is not a JSON object" +
                           (j.is_discarded() ? " (it does not parse)" : "") +
                           "; `launch` writes it: remove it if experiment " + std::to_string(id) +
                           " is no longer running");
    }
    auto wrong = [&](const char* key, const std::string& expected) {
        return JobFileError("job file " + path + ": \"" + key + "\" is " + typeName(j.at(key)) +
                            ", expected " + expected);
    };
    auto integer = [&](const char* key, bool required, int64_t low, int64_t high,
                       const std::string& expected) -> int64_t {
        auto it = j.find(key);
        if (it == j.end()) {
            if (required) {
                throw JobFileError("job file " + path + ": \"" + key + "\" is missing (" +
                                   expected + ")");
            }
            return 0;
        }
        if (!it->is_number_integer()) {
            throw wrong(key, expected);
        }
        const int64_t v = it->is_number_unsigned() && it->get<uint64_t>() > INT64_MAX
                              ? INT64_MAX
                              : it->get<int64_t>();
        if (v < low || v > high) {
            throw wrong(key, expected);
        }
        return v;
    };
    auto text_field = [&](const char* key) -> std::string {
        auto it = j.find(key);
        if (it == j.end()) {
            return {};
        }
        if (!it->is_string()) {
            throw wrong(key, "a string");
        }
        return it->get<std::string>();
    };
    Job job;
    job.experiment_id = integer("experiment_id", true, 1, INT64_MAX, "the experiment's id");
    if (job.experiment_id != id) {
        throw JobFileError("job file " + path + ": \"experiment_id\" is " +
                           std::to_string(job.experiment_id) + ", but the file is experiment " +
                           std::to_string(id) + "'s");
    }
    job.pid = static_cast<pid_t>(
        integer("pid", true, 1, std::numeric_limits<pid_t>::max(), "a process id from 1 up"));
    job.pid_start = integer("pid_start", true, 1, INT64_MAX,
                            "the process's start time in clock ticks, from 1 up");
    job.log = text_field("log");
    job.db = text_field("db");
    job.device = text_field("device");
    job.runs = integer("runs", false, 0, INT64_MAX, "a count of runs from 0 up");
    job.started_at = integer("started_at", false, 0, INT64_MAX, "seconds since 1970");
    if (j.contains("exit_code")) {
        job.exit_code = static_cast<int>(integer("exit_code", true, 0, 255, "an exit code 0-255"));
        job.ended_at = integer("ended_at", false, 0, INT64_MAX, "seconds since 1970");
    }
    return job;
}

/// Writes the job file whole or not at all: a new file of mode 0600, created
/// exclusively (never through a link planted at its name), then renamed over the old.
void writeJob(const std::string& db_path, const Job& job) {
    const std::string path = jobFile(db_path, job.experiment_id);
    const std::string temp = jobsDir(db_path) + "/." + std::to_string(job.experiment_id) +
                             ".json." + std::to_string(::getpid()) + ".tmp";
    const int flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
    int fd = ::open(temp.c_str(), flags, 0600);
    if (fd < 0 && errno == EEXIST) {  // left by a dead process that had this pid
        ::unlink(temp.c_str());
        fd = ::open(temp.c_str(), flags, 0600);
    }
    if (fd < 0) {
        throw JobFileError("cannot write job file " + path + ": " + std::strerror(errno));
    }
    const std::string text = toJson(job).dump(2) + "\n";
    const char* p = text.data();
    size_t left = text.size();
    int error = 0;
    while (left > 0 && error == 0) {
        const ssize_t n = ::write(fd, p, left);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            error = errno;
            break;
        }
        p += n;
        left -= static_cast<size_t>(n);
    }
    if (error == 0 && ::fsync(fd) != 0) {
        error = errno;
    }
    if (::close(fd) != 0 && error == 0) {
        error = errno;
    }
    if (error == 0 && ::rename(temp.c_str(), path.c_str()) != 0) {
        error = errno;
    }
    if (error != 0) {
        ::unlink(temp.c_str());
        throw JobFileError("cannot write job file " + path + ": " + std::strerror(error));
    }
}

/// The start time of process `pid` in clock ticks since boot (/proc/PID/stat, field
/// 22), or 0 when there is no such process or it is a zombie. With the pid it names
/// one process: a pid the kernel reused has another start time.
long long processStart(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto close = text.rfind(')');  // the command name may hold spaces and ')'
    if (close == std::string::npos) {
        return 0;
    }
    std::istringstream rest(text.substr(close + 2));
    std::string field, state;
    rest >> state;
    if (state == "Z" || state == "X") {
        return 0;
    }
    for (int i = 4; i <= 22; ++i) {  // fields 4 … 22 after the state (field 3)
        if (!(rest >> field)) {
            return 0;
        }
    }
    return std::atoll(field.c_str());
}

/// The process that holds the job's lock, 0 when none does.
pid_t lockHolder(const std::string& lock_path) {
    const int fd = ::open(lock_path.c_str(), O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        return 0;
    }
    struct stat st {};
    pid_t holder = 0;
    if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
        struct flock lock {};
        lock.l_type = F_WRLCK;
        lock.l_whence = SEEK_SET;
        if (::fcntl(fd, F_GETLK, &lock) == 0 && lock.l_type != F_UNLCK) {
            holder = lock.l_pid;
        }
    }
    ::close(fd);
    return holder;
}

/// Taken by the job before it writes its job file, held until it exits (the
/// descriptor is never closed; the kernel lets go when the process ends).
void holdJobLock(const std::string& db_path, int64_t id) {
    const std::string path = jobLockFile(db_path, id);
    const int flags = O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
    int fd = ::open(path.c_str(), flags, 0600);
    if (fd < 0 && errno == EEXIST) {  // an ended job's, or a link someone left
        ::unlink(path.c_str());
        fd = ::open(path.c_str(), flags, 0600);
    }
    struct flock lock {};
    lock.l_type = F_WRLCK;
    lock.l_whence = SEEK_SET;
    if (fd < 0 || ::fcntl(fd, F_SETLK, &lock) != 0) {
        throw JobFileError("cannot lock " + path + ": " + std::strerror(errno));
    }
}

/// Whether the process a job file names is there, and whether it is that job.
enum class JobProcess {
    Gone,         ///< no process with that pid and start time
    Ours,         ///< it holds the job's lock: it is the experiment's job
    Unconfirmed,  ///< a live process that holds no lock: not (or not provably) the job
};

JobProcess jobProcess(const std::string& db_path, const Job& job) {
    const long long start = processStart(job.pid);
    if (start == 0 || start != job.pid_start) {
        return JobProcess::Gone;
    }
    return lockHolder(jobLockFile(db_path, job.experiment_id)) == job.pid ? JobProcess::Ours
                                                                          : JobProcess::Unconfirmed;
}

std::string readText(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void writeAll(int fd, const std::string& text) {
    const char* p = text.data();
    size_t left = text.size();
    while (left > 0) {
        const ssize_t n = ::write(fd, p, left);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return;
        }
        p += n;
        left -= static_cast<size_t>(n);
    }
}

/// The detached job: trains `spec` into the database with its output in the log.
/// Tells the launcher on `report` ("planned ID" or "failed CODE") and closes it.
int runJob(const std::string& db_path, const config::ValidSpec& valid,
           const std::string& pending_log, int report) {
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
    if (int code = preflight(spec, device, false); code != kOk) {
        return fail(code);
    }
    std::unique_ptr<store::Database> db;
    try {
        db = store::Database::open(db_path);
    } catch (const store::StoreError& e) {
        say(stderr, "%s\n", e.what());
        return fail(kStoreError);
    }
    run::CancelToken cancel;
    InterruptScope interrupt(cancel);
    std::optional<Job> job;
    std::unique_ptr<Progress> progress;
    train::ExperimentHooks hooks;
    hooks.setup_checked = true;
    hooks.planned = [&](const train::ExperimentPlan& plan) {
        const std::string log =
            jobsDir(db_path) + "/" + std::to_string(plan.experiment_id) + ".log";
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
        say(stderr, "experiment %lld '%s': %zu runs on %s, recording to %s\n",
            static_cast<long long>(plan.experiment_id),
            analysis::printable(spec.name, false).c_str(), plan.runs.size(), device.c_str(),
            db_path.c_str());
        progress = std::make_unique<Progress>(static_cast<int>(plan.runs.size()), false, false);
        if (report >= 0) {
            writeAll(report, "planned " + std::to_string(plan.experiment_id) + "\n");
            ::close(report);
            report = -1;
        }
    };
    int index = 0;
    hooks.starting = [&](const train::PlannedRun& run) -> run::TrainObserver* {
        progress->beginRun(index++, run.arm, run.seed, run.planned_steps);
        return progress.get();
    };
    train::ExperimentResult result;
    int code = kOk;
    try {
        result = train::runExperiment(*db, valid, cancel, hooks);
        code = cancel.cancelled() ? kCancelled : result.any_failed ? kRunsFailed : kOk;
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

/// Sends `signal` to `pid` only while it is still the process whose start time is
/// `start`: through a pidfd where the kernel has them, so a pid reused between the
/// check and the signal cannot be hit.
int signalJob(pid_t pid, long long start, int signal) {
#ifdef SYS_pidfd_open
    const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
    if (pidfd >= 0) {
        int result = -1;
        if (processStart(pid) == start) {
            result = static_cast<int>(::syscall(SYS_pidfd_send_signal, pidfd, signal, nullptr, 0));
        } else {
            errno = ESRCH;
        }
        const int error = errno;
        ::close(pidfd);
        errno = error;
        return result;
    }
#endif
    if (processStart(pid) != start) {
        errno = ESRCH;
        return -1;
    }
    return ::kill(pid, signal);
}

}  // namespace

int commandLaunch(const std::string& db_path, RunOverrides o, const LaunchOptions& l) {
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
    // Created here and nowhere else: a link or file already at the name (an earlier
    // launcher's with this pid, or planted) is removed, never written through.
    const std::string pending = jobsDir(db_path) + "/launch-" + std::to_string(::getpid()) + ".log";
    const int log_flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_APPEND | O_CLOEXEC;
    int log = ::open(pending.c_str(), log_flags, 0600);
    if (log < 0 && errno == EEXIST && ::unlink(pending.c_str()) == 0) {
        log = ::open(pending.c_str(), log_flags, 0600);
    }
    if (log < 0) {
        say(stderr, "launch: cannot create the job's log %s: %s\n", pending.c_str(),
            std::strerror(errno));
        return kIoError;
    }
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) {
        say(stderr, "launch: pipe: %s\n", std::strerror(errno));
        return kIoError;
    }
    std::fflush(stdout);
    std::fflush(stderr);
    const pid_t first = ::fork();
    if (first < 0) {
        say(stderr, "launch: fork: %s\n", std::strerror(errno));
        return kIoError;
    }
    if (first == 0) {
        // A session of its own (no terminal, no SIGHUP when SSH hangs up), then a
        // second fork so that the job is no session leader and is adopted by init.
        ::setsid();
        if (::fork() != 0) {
            ::_exit(0);
        }
        ::close(fds[0]);
        const int null = ::open("/dev/null", O_RDONLY);
        ::dup2(null, STDIN_FILENO);
        ::dup2(log, STDOUT_FILENO);
        ::dup2(log, STDERR_FILENO);
        ::close(null);
        ::close(log);
        std::signal(SIGHUP, SIG_IGN);
        std::signal(SIGPIPE, SIG_IGN);
        writeAll(fds[1], "pid " + std::to_string(::getpid()) + "\n");
        int code = kRunsFailed;
        try {
            code = runJob(db_path, *valid, pending, fds[1]);
        } catch (const std::exception& e) {
            say(stderr, "ampbench-cli: %s\n", e.what());
            writeAll(fds[1], "failed " + std::to_string(kRunsFailed) + "\n");
        }
        std::fflush(stdout);
        std::fflush(stderr);
        ::_exit(code);
    }
    ::close(fds[1]);
    ::close(log);
    int status = 0;
    ::waitpid(first, &status, 0);

    // The job says "pid N", then "planned ID" or "failed CODE"; the pipe closing
    // before either means that it died.
    std::string said;
    auto verdict = [&]() -> std::string {
        std::istringstream lines(said);
        std::string line;
        while (std::getline(lines, line)) {
            if (lines.good() && (line.rfind("planned ", 0) == 0 || line.rfind("failed ", 0) == 0)) {
                return line;
            }
        }
        return {};
    };
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(int64_t(l.wait_s * 1000));
    bool timed_out = false;
    while (verdict().empty()) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                              deadline - std::chrono::steady_clock::now())
                              .count();
        if (left <= 0) {
            timed_out = true;
            break;
        }
        pollfd p{fds[0], POLLIN, 0};
        const int r = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left, 1000)));
        if (r < 0 && errno == EINTR) {
            continue;
        }
        if (r <= 0) {
            continue;
        }
        char buf[256];
        const ssize_t n = ::read(fds[0], buf, sizeof buf);
        if (n <= 0) {
            break;
        }
        said.append(buf, static_cast<size_t>(n));
    }
    ::close(fds[0]);
    const pid_t job_pid = said.rfind("pid ", 0) == 0 ? std::atoi(said.c_str() + 4) : 0;
    const std::string line = verdict();
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

int commandStatus(const std::string& db_path, int64_t experiment_id, bool as_json) {
    std::unique_ptr<store::Database> db;
    try {
        db = store::Database::open(db_path, store::Database::Mode::ReadOnly);
    } catch (const store::StoreError& e) {
        say(stderr, "%s\n", e.what());
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
    int code = kOk;
    json out = json::array();
    for (const auto& e : entries) {
        const auto runs = db->runs(e.id);
        const JobProcess process = e.job ? jobProcess(db_path, *e.job) : JobProcess::Gone;
        const auto experiment = db->experiment(e.id);
        json j = {{"experiment_id", e.id},
                  {"state", jobState(process, e.job.has_value(), runs)},
                  {"name", experiment ? experiment->name : std::string()}};
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
            say(stderr, "status: %s\n", e.problem.c_str());
            j["job_file_problem"] = e.problem;
            code = kIoError;
        }
        j["runs"] = json::array();
        for (const auto& r : runs) {
            j["runs"].push_back(runJson(r, e.job && process == JobProcess::Gone));
        }
        out.push_back(j);
    }
    if (as_json) {
        printJson(json{{"jobs", out}});
        return code;
    }
    if (out.empty()) {
        say(stdout, "no launched jobs in %s\n", db_path.c_str());
        return code;
    }
    for (const auto& j : out) {
        say(stdout, "experiment %lld '%s': %s", static_cast<long long>(j["experiment_id"]),
            analysis::printable(j["name"].get<std::string>(), false).c_str(),
            j["state"].get<std::string>().c_str());
        if (j.contains("pid")) {
            say(stdout, " (pid %d, log %s)", j["pid"].get<int>(),
                analysis::printable(j["log"].get<std::string>(), false).c_str());
        }
        say(stdout, "\n");
        for (const auto& r : j["runs"]) {
            const int64_t planned = r["planned_steps"];
            const int64_t step = r["step"];
            say(stdout, "  run %lld %-12s seed %-3llu %-11s step %lld/%lld (%.0f%%)\n",
                static_cast<long long>(r["id"]),
                analysis::printable(r["arm"].get<std::string>(), false).c_str(),
                static_cast<unsigned long long>(r["seed"].get<uint64_t>()),
                r["status"].get<std::string>().c_str(), static_cast<long long>(step),
                static_cast<long long>(planned),
                planned > 0 ? 100.0 * static_cast<double>(step) / static_cast<double>(planned)
                            : 0.0);
        }
    }
    return code;
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
    auto runsOf = [&] {
        return store::Database::open(db_path, store::Database::Mode::ReadOnly)->runs(experiment_id);
    };
    switch (jobProcess(db_path, *job)) {
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
                path.c_str(), static_cast<int>(job->pid), static_cast<long long>(experiment_id),
                jobLockFile(db_path, experiment_id).c_str());
            return kNotFound;
        case JobProcess::Ours:
            break;
    }
    const pid_t pid = job->pid;
    if (signalJob(pid, job->pid_start, SIGTERM) != 0) {
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
    while (jobProcess(db_path, *job) == JobProcess::Ours) {
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
    if (out.contains("data")) {
        say(stdout, "data %s: %s\n", data_dir.c_str(),
            out["data"]["exists"].get<bool>()
                ? (std::to_string(out["data"]["entries"].size()) + " entries").c_str()
                : "missing");
    }
    return kOk;
}

}  // namespace ampbench::cli
