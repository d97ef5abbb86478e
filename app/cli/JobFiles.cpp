// The jobs folder and the job files of `launch`, `status` and `cancel` (see JobFiles.h).
#include "cli/JobFiles.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/launch/Scheduler.h"

using nlohmann::json;

namespace ampbench::cli {

std::string jobsDir(const std::string& db_path) {
    return db_path + ".jobs";
}
std::string jobFile(const std::string& db_path, int64_t id) {
    return jobsDir(db_path) + "/" + std::to_string(id) + ".json";
}
std::string jobLogFile(const std::string& db_path, int64_t id) {
    return jobsDir(db_path) + "/" + std::to_string(id) + ".log";
}
std::string jobLockFile(const std::string& db_path, int64_t id) {
    return jobsDir(db_path) + "/" + std::to_string(id) + ".lock";
}
std::string arrayDir(const std::string& db_path, int64_t id, const std::string& scheduler) {
    return jobsDir(db_path) + "/" + std::to_string(id) + "." + scheduler;
}

namespace {

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
    if (!job.scheduler.empty()) {
        j["scheduler"] = job.scheduler;
        j["scheduler_job"] = job.scheduler_job;
        if (const launch::Scheduler* s = launch::schedulerNamed(job.scheduler)) {
            j["scheduler_options"] = launch::optionsToJson(s->info(), job.scheduler_options);
        }
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

}  // namespace

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
    job.scheduler = text_field("scheduler");
    job.scheduler_job = text_field("scheduler_job");
    const launch::Scheduler* scheduler = launch::schedulerNamed(job.scheduler);
    if (!job.scheduler.empty() && scheduler == nullptr) {
        std::string names;
        for (const launch::Scheduler* s : launch::schedulers()) {
            names += (names.empty() ? "\"" : "\", \"") + s->info().name;
        }
        throw JobFileError("job file " + path + ": \"scheduler\" is \"" + job.scheduler +
                           "\", expected one of " + names +
                           "\" (or none, for a job of this machine)");
    }
    if (scheduler != nullptr && j.contains("scheduler_options")) {
        try {
            job.scheduler_options =
                launch::optionsFromJson(scheduler->info(), j.at("scheduler_options"));
        } catch (const std::invalid_argument& e) {
            throw JobFileError("job file " + path + ": \"scheduler_options\": " + e.what());
        }
    }
    if (!job.scheduler_job.empty() &&
        job.scheduler_job.find_first_not_of("0123456789") != std::string::npos) {
        throw JobFileError("job file " + path + ": \"scheduler_job\" is \"" + job.scheduler_job +
                           "\", expected the scheduler's job id (digits)");
    }
    return job;
}

void writePrivateFile(const std::string& path, const std::string& text, unsigned mode,
                      const std::string& temp_name, const std::string& what) {
    const std::string temp =
        temp_name.empty() ? path + "." + std::to_string(::getpid()) + ".tmp" : temp_name;
    const int flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
    int fd = ::open(temp.c_str(), flags, mode);
    if (fd < 0 && errno == EEXIST) {  // left by a dead process that had this pid
        ::unlink(temp.c_str());
        fd = ::open(temp.c_str(), flags, mode);
    }
    if (fd < 0) {
        throw JobFileError("cannot write " + what + path + ": " + std::strerror(errno));
    }
    size_t done = 0;
    int error = 0;
    while (done < text.size()) {
        const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            error = errno;
            break;
        }
        done += static_cast<size_t>(n);
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
        throw JobFileError("cannot write " + what + path + ": " + std::strerror(error));
    }
}

void writeJob(const std::string& db_path, const Job& job) {
    writePrivateFile(jobFile(db_path, job.experiment_id), toJson(job).dump(2) + "\n", 0600,
                     jobsDir(db_path) + "/." + std::to_string(job.experiment_id) + ".json." +
                         std::to_string(::getpid()) + ".tmp",
                     "job file ");
}

std::string pendingLogFile(const std::string& db_path, pid_t launcher) {
    return jobsDir(db_path) + "/launch-" + std::to_string(launcher) + ".log";
}

int createLog(const std::string& path) {
    const int flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_APPEND | O_CLOEXEC;
    int fd = ::open(path.c_str(), flags, 0600);
    if (fd < 0 && errno == EEXIST && ::unlink(path.c_str()) == 0) {
        fd = ::open(path.c_str(), flags, 0600);
    }
    return fd;
}

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

void takeOverJobLock(const std::string& db_path, int64_t id) {
    const std::string path = jobLockFile(db_path, id);
    const int fd = ::open(path.c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        holdJobLock(db_path, id);  // none there (removed, or never made): a new one
        return;
    }
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid()) {
        ::close(fd);
        holdJobLock(db_path, id);  // not a lock file of ours: replaced, never used
        return;
    }
    struct flock lock {};
    lock.l_type = F_WRLCK;
    lock.l_whence = SEEK_SET;
    if (::fcntl(fd, F_SETLK, &lock) != 0) {
        const int error = errno;
        const pid_t holder = lockHolder(path);
        ::close(fd);
        if (holder > 0) {
            throw JobFileError(path + " is held by pid " + std::to_string(holder) +
                               ", which still records experiment " + std::to_string(id));
        }
        throw JobFileError("cannot lock " + path + ": " + std::strerror(error));
    }
    // Kept open (and locked) until this process exits.
}

pid_t jobLockHolder(const std::string& db_path, int64_t id) {
    return lockHolder(jobLockFile(db_path, id));
}

JobProcess jobProcess(const std::string& db_path, const Job& job) {
    const long long start = processStart(job.pid);
    if (start == 0 || start != job.pid_start) {
        return JobProcess::Gone;
    }
    return lockHolder(jobLockFile(db_path, job.experiment_id)) == job.pid ? JobProcess::Ours
                                                                          : JobProcess::Unconfirmed;
}

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

}  // namespace ampbench::cli
