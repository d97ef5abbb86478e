#pragma once
// Slurm's client tools as the launcher uses them: finding them on PATH, running them
// without a shell (nothing the user typed becomes shell syntax), and reading what
// squeue and sacct say of a job array's tasks.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ampbench::cli::slurm {

/// The program's path when `name` is an executable on PATH; empty when it is not.
std::string findProgram(const std::string& name);

/// What a program said and how it ended.
struct ProgramResult {
    int exit_code = -1;  ///< its exit status; 128+N when signal N ended it; -1 when it never ran
    std::string out;
    std::string err;
    std::string problem;  ///< why it never ran or was stopped (exec failed, timed out)
    bool ok() const { return problem.empty() && exit_code == 0; }
    /// Its own words: stderr, else stdout, trimmed; else `problem`.
    std::string words() const;
};

/// Runs argv[0] (found on PATH) with the arguments as they are, stdin from /dev/null,
/// and collects its output; stops it after `timeout_s`.
ProgramResult runProgram(const std::vector<std::string>& argv, double timeout_s = 60);

/// One task of a job array as the scheduler sees it.
struct TaskState {
    std::string state;   ///< PENDING, RUNNING, COMPLETED, FAILED, TIMEOUT, CANCELLED, ...
    std::string reason;  ///< why it is pending (Resources, Priority, ...), "None" otherwise
    std::string node;
    std::string time_limit;
    std::string time_used;
    std::string exit_code;  ///< "0:9" (code:signal) where sacct tells it
    std::string source;     ///< "squeue" or "sacct"
};

/// Whether a task in `state` will not run again (COMPLETED, FAILED, TIMEOUT,
/// CANCELLED, NODE_FAIL, OUT_OF_MEMORY, PREEMPTED without requeue, ...).
bool terminalState(const std::string& state);

/// The tasks in `squeue -h -r -t all -j JOB -o %i|%K|%T|%r|%N|%l|%M` output, by array
/// index; lines of other jobs and of the array's own record are skipped.
std::map<int, TaskState> parseSqueue(const std::string& text, const std::string& job_id);
/// The tasks in `sacct -n -P -X -j JOB -o JobID,State,Reason,NodeList,Timelimit,Elapsed,ExitCode`
/// output ("CANCELLED by 0" reads as CANCELLED; "12_[3-5]" as tasks 3, 4 and 5).
std::map<int, TaskState> parseSacct(const std::string& text, const std::string& job_id);

/// What the scheduler says of a job array now: squeue first (the controller knows
/// pending, running and recently ended tasks), sacct for the tasks squeue no longer
/// lists, where accounting is kept (a small cluster may have none).
struct ArrayView {
    std::map<int, TaskState> tasks;
    bool squeue_ok = false;
    std::string problem;     ///< squeue's own words when it could not be asked
    bool accounting = true;  ///< false once sacct said that accounting is disabled
};
ArrayView queryArray(const std::string& job_id, bool ask_sacct, bool* accounting = nullptr);

/// `text` as one word for a POSIX shell: in single quotes, each ' as '\''.
std::string shellQuote(const std::string& text);

/// A planned run as its task needs it (a row of the experiment's tasks.json).
struct TaskRun {
    int64_t run_id = 0;  ///< the run in the database on the login host
    std::string arm;
    int arm_index = 0;
    uint64_t seed = 0;
    std::string arm_json;
    int64_t planned_steps = 0;
    std::string inputs_json;
};

/// What launch --slurm writes beside the database for the tasks (tasks.json):
/// the experiment, its spec and which runs each array task trains.
struct TaskList {
    int64_t experiment_id = 0;
    std::string experiment_name;
    std::string spec_json;
    std::string time_limit;  ///< as given to sbatch; empty for the partition's default
    std::vector<std::vector<TaskRun>> tasks;
};
std::string taskListText(const TaskList& list);
/// Throws std::runtime_error naming the file and the field that is wrong.
TaskList readTaskList(const std::string& path);

/// Files of an experiment's Slurm folder.
std::string taskListFile(const std::string& dir);
std::string batchScript(const std::string& dir);
std::string taskOutput(const std::string& dir, int task);
/// The record stream attempt `attempt` (Slurm's restart count) of task `task` writes.
std::string streamFile(const std::string& dir, int task, int attempt);

/// The first "N" of `sbatch --parsable` output ("N" or "N;cluster"); empty when the
/// output is not that.
std::string parsableJobId(const std::string& out);

}  // namespace ampbench::cli::slurm
