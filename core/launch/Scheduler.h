#pragma once
// A cluster's scheduler as `launch` uses it: an experiment's runs go to it as one job
// array (a task per run, or per group of runs_per_gpu runs), each task streams its
// records into the experiment's folder, and a collector on the launching host reads
// them into the database and asks the scheduler what became of each task.
//
// A scheduler is one class: its declaration (SchedulerInfo: name, tools, options),
// the batch script and the submit command, what its tools say of the array's tasks,
// and how it cancels them. Its name in schedulers() (Schedulers.cpp) is its
// registration; the CLI's flags, the job files, the desktop's host settings and hosts
// dialog, the collector and the task side all come from that.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/launch/LaunchOption.h"

namespace ampbench::launch {

/// How a task ended, as its scheduler tells it.
enum class TaskEnd {
    None,       ///< it has not ended: pending, running, or requeued to run again
    Completed,  ///< it exited 0
    Failed,     ///< it exited otherwise, was killed, or its node failed
    TimedOut,   ///< it ran past its time limit
    Preempted,  ///< the scheduler took its resources for another job
    Cancelled,  ///< the user cancelled it (scancel, qdel)
};

/// One task of a job array as the scheduler sees it.
struct TaskState {
    std::string state;   ///< the scheduler's word for it: PENDING, RUNNING, COMPLETED, ...
    std::string reason;  ///< why it is pending or how it ended, in the scheduler's words
    std::string node;
    std::string time_limit;
    std::string time_used;
    std::string exit_code;
    std::string source;  ///< the tool that said it ("squeue", "qacct")
    TaskEnd end = TaskEnd::None;
    bool pending = false;  ///< waiting to start
};

/// What the scheduler says of a job array now.
struct ArrayView {
    std::map<int, TaskState> tasks;  ///< by task index, 0 first
    bool answered = false;           ///< false: it could not be asked (`problem` says why)
    std::string problem;
};

/// What a collector keeps between its questions: accounting a cluster has not got.
struct QueryMemory {
    bool accounting = true;
};

/// A job array to submit.
struct ArrayJob {
    int64_t experiment_id = 0;
    std::string db_path;  ///< the database it records into, named in the script
    std::string dir;      ///< its folder: the task list, the script, outputs, streams
    std::string program;  ///< ampbench-cli's path, which each task runs
    int tasks = 0;        ///< indices 0 to tasks-1
    int runs_per_task = 1;
    OptionValues options;  ///< checked against the scheduler's declaration
};

/// What submitting said: the scheduler's id of the array, or why it refused.
struct Submission {
    std::string job_id;  ///< empty when refused
    int exit_code = 0;
    std::string words;  ///< the submit tool's own words when it refused
};

/// Runs the submit tool `argv` (two minutes at most) and reads the array's id from its
/// output with `job_id`; where none is read, the tool's exit code and its own words.
Submission submitArray(const std::vector<std::string>& argv,
                       std::string (*job_id)(const std::string& out));

class Scheduler {
  public:
    virtual ~Scheduler() = default;
    virtual const SchedulerInfo& info() const = 0;

    /// The batch script every task runs: `ampbench-cli array-task --dir DIR --task I`
    /// with I its index (0 first), its output appended to taskOutput(dir, I).
    virtual std::string batchScript(const ArrayJob& job) const = 0;
    /// The submit tool's command line for the array, `script` last (tests read it).
    virtual std::vector<std::string> submitCommand(const ArrayJob& job,
                                                   const std::string& script) const = 0;
    /// Submits it.
    virtual Submission submit(const ArrayJob& job, const std::string& script) const = 0;
    /// What the scheduler says of the array's tasks; with `ask_accounting` also of the
    /// tasks it has stopped listing (its accounting), unless `memory` knows it has none.
    virtual ArrayView query(const std::string& job_id, bool ask_accounting,
                            QueryMemory& memory) const = 0;
    /// Cancels every task of the array; empty when done (or nothing is left to cancel),
    /// else the scheduler's words.
    virtual std::string cancel(const std::string& job_id) const = 0;
    /// The scheduler's own name of a task ("Slurm task 12_0", "Grid Engine task 12.1").
    virtual std::string taskName(const std::string& job_id, int index) const = 0;

    /// Readings in a row that list a task nowhere (not queued, not in its accounting)
    /// after which it counts as ended: what a scheduler needs to write its accounting.
    virtual int readingsBeforeForgotten() const { return 3; }
    /// Signals a task takes as "stop now", beside SIGTERM and SIGINT (a warning that a
    /// kill follows), and signals it ignores (a warning that does not end it).
    virtual std::vector<int> stopSignals() const { return {}; }
    virtual std::vector<int> ignoredSignals() const { return {}; }
};

/// Every scheduler this build launches on, in the order they are offered.
const std::vector<const Scheduler*>& schedulers();
/// The scheduler of that name, or null.
const Scheduler* schedulerNamed(const std::string& name);
/// "--slurm or --gridengine": how to choose one, for messages.
std::string schedulerFlags();

/// Names the first of `info`'s required tools missing on PATH and what to do; empty
/// when every one is there.
std::string missingTools(const SchedulerInfo& info, const std::vector<std::string>& tools);

}  // namespace ampbench::launch
