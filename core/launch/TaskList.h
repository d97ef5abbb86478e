#pragma once
// What a launched job array leaves in its experiment's folder (<db>.jobs/<id>.<scheduler>/)
// for its tasks and its collector: the task list (the spec and the runs of each task),
// the batch script, each task's output and the record stream of each of its attempts.
#include <cstdint>
#include <string>
#include <vector>

namespace ampbench::launch {

/// A planned run as its task needs it (a row of the experiment's tasks.json).
struct TaskRun {
    int64_t run_id = 0;  ///< the run in the database on the host that launched it
    std::string arm;
    int arm_index = 0;
    uint64_t seed = 0;
    std::string arm_json;
    int64_t planned_steps = 0;
    std::string inputs_json;
};

/// tasks.json: the experiment, its spec and which runs each array task trains.
struct TaskList {
    int64_t experiment_id = 0;
    std::string experiment_name;
    std::string spec_json;
    std::string time_limit;  ///< as the user gave it; empty for the scheduler's default
    std::string scheduler;   ///< the scheduler's name; empty in lists from before it was kept
    std::vector<std::vector<TaskRun>> tasks;
};
std::string taskListText(const TaskList& list);
/// Throws std::runtime_error naming the file and the field that is wrong.
TaskList readTaskList(const std::string& path);

/// Files of an experiment's folder.
std::string taskListFile(const std::string& dir);
std::string batchScript(const std::string& dir);
/// What task `task` (0 first) said: its output, appended to by each attempt.
std::string taskOutput(const std::string& dir, int task);
/// The record stream attempt `attempt` (0 first) of task `task` writes.
std::string streamFile(const std::string& dir, int task, int attempt);
/// Written by `cancel` before it asks the scheduler: a task that ends unseen after it
/// was cancelled, not lost.
std::string cancelMark(const std::string& dir);

}  // namespace ampbench::launch
