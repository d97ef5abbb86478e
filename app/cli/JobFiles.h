#pragma once
// The jobs folder beside a database and the files a launched job keeps there:
// <experiment>.json (what the job is), <experiment>.log (its output) and
// <experiment>.lock (held while it runs). The folder is private (mode 0700, this
// user's own) and every file in it is created exclusively, mode 0600, never
// through a link, since these files decide which process `cancel` signals.
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

#include "core/launch/LaunchOption.h"

namespace ampbench::cli {

std::string jobsDir(const std::string& db_path);
std::string jobFile(const std::string& db_path, int64_t id);
/// Where a job's output ends up once it has planned its experiment.
std::string jobLogFile(const std::string& db_path, int64_t id);
/// Held (an fcntl write lock) by a job for as long as it runs: only the process
/// that holds it is the experiment's job, whatever pid a job file names.
std::string jobLockFile(const std::string& db_path, int64_t id);

/// A jobs folder or a job file that cannot be used; the message names it (exit 6).
class JobFileError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

/// The jobs folder beside the database, private to this user: created with mode
/// 0700 when `create`; refused when it is a link, not a folder, someone else's or
/// writable by others, since its files decide which process `cancel` signals.
/// False (and nothing created) when it does not exist and `create` is false.
bool checkJobsDir(const std::string& db_path, bool create);

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
    /// The launcher that started it: empty for this machine's detached process, a
    /// scheduler's name ("slurm", "gridengine") for a job array (`pid` is then its
    /// collector on this host).
    std::string scheduler;
    std::string scheduler_job;  ///< the scheduler's id of the job (Slurm's job id)
    /// The scheduler's options it was launched with ("scheduler_options": each declared
    /// option's key and value, launch::optionsToJson).
    launch::OptionValues scheduler_options;
};

/// Where a job array's experiment keeps what its tasks read and write: the task list,
/// the batch script, each task's output and record streams (<id>.<scheduler>).
std::string arrayDir(const std::string& db_path, int64_t id, const std::string& scheduler);

/// The job file at `path`: nullopt when there is none. Anything but a regular file
/// (a FIFO would block the reader, a link could lead anywhere), text that is not
/// JSON, or a field of the wrong type is a JobFileError naming the file and field.
std::optional<Job> readJob(const std::string& path, int64_t id);

/// Writes `text` to `path` whole or not at all: a new file of `mode` at `temp`
/// (default: beside `path`), created exclusively (never through a link planted at
/// its name), synced, then renamed over the old. JobFileError "cannot write
/// `what``path`: reason".
void writePrivateFile(const std::string& path, const std::string& text, unsigned mode = 0600,
                      const std::string& temp = "", const std::string& what = "");

/// Writes the job file whole or not at all: a new file of mode 0600, created
/// exclusively (never through a link planted at its name), then renamed over the old.
void writeJob(const std::string& db_path, const Job& job);

/// The launcher's log for the job's output until it has planned its experiment.
std::string pendingLogFile(const std::string& db_path, pid_t launcher);

/// Opens `path` for appending, created here and nowhere else: a link or file
/// already at the name (an earlier launcher's with this pid, or planted) is
/// removed, never written through. The descriptor, or -1 with errno set.
int createLog(const std::string& path);

/// The start time of process `pid` in clock ticks since boot (/proc/PID/stat, field
/// 22), or 0 when there is no such process or it is a zombie. With the pid it names
/// one process: a pid the kernel reused has another start time.
long long processStart(pid_t pid);

/// Taken by the job before it writes its job file, held until it exits (the
/// descriptor is never closed; the kernel lets go when the process ends).
void holdJobLock(const std::string& db_path, int64_t id);

/// Takes the job's lock for a process that carries on an ended job's work (a
/// collector started again), without replacing the lock file: a job still holding it
/// is found, never doubled. JobFileError naming the holder's pid when one holds it.
void takeOverJobLock(const std::string& db_path, int64_t id);

/// The process that holds the job's lock, 0 when none does.
pid_t jobLockHolder(const std::string& db_path, int64_t id);

/// Whether the process a job file names is there, and whether it is that job.
enum class JobProcess {
    Gone,         ///< no process with that pid and start time
    Ours,         ///< it holds the job's lock: it is the experiment's job
    Unconfirmed,  ///< a live process that holds no lock: not (or not provably) the job
};

JobProcess jobProcess(const std::string& db_path, const Job& job);

/// Sends `signal` to `pid` only while it is still the process whose start time is
/// `start`: through a pidfd where the kernel has them, so a pid reused between the
/// check and the signal cannot be hit.
int signalJob(pid_t pid, long long start, int signal);

}  // namespace ampbench::cli
