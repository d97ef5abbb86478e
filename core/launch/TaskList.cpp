// An experiment's job-array folder: the task list and the files' names (TaskList.h).
#include "core/launch/TaskList.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace ampbench::launch {

std::string taskListFile(const std::string& dir) {
    return dir + "/tasks.json";
}
std::string batchScript(const std::string& dir) {
    return dir + "/array.sh";
}
std::string taskOutput(const std::string& dir, int task) {
    return dir + "/task-" + std::to_string(task) + ".out";
}
std::string streamFile(const std::string& dir, int task, int attempt) {
    return dir + "/task-" + std::to_string(task) + ".attempt-" + std::to_string(attempt) + ".jsonl";
}
std::string cancelMark(const std::string& dir) {
    return dir + "/cancelled";
}

std::string taskListText(const TaskList& list) {
    nlohmann::json tasks = nlohmann::json::array();
    for (const auto& task : list.tasks) {
        nlohmann::json runs = nlohmann::json::array();
        for (const auto& r : task) {
            runs.push_back({{"run_id", r.run_id},
                            {"arm", r.arm},
                            {"arm_index", r.arm_index},
                            {"seed", r.seed},
                            {"arm_json", r.arm_json},
                            {"planned_steps", r.planned_steps},
                            {"inputs_json", r.inputs_json}});
        }
        tasks.push_back({{"runs", runs}});
    }
    return nlohmann::json{
               {"experiment_id", list.experiment_id}, {"experiment_name", list.experiment_name},
               {"spec_json", list.spec_json},         {"time_limit", list.time_limit},
               {"scheduler", list.scheduler},         {"tasks", tasks}}
               .dump(2, ' ', false, nlohmann::json::error_handler_t::replace) +
           "\n";
}

TaskList readTaskList(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        throw std::runtime_error("cannot read " + path + ": " + std::strerror(errno));
    }
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
        throw std::runtime_error(path + " is not a JSON object (launch writes it for a job array)");
    }
    TaskList list;
    try {
        list.experiment_id = j.at("experiment_id").get<int64_t>();
        list.experiment_name = j.value("experiment_name", std::string());
        list.spec_json = j.at("spec_json").get<std::string>();
        list.time_limit = j.value("time_limit", std::string());
        list.scheduler = j.value("scheduler", std::string());
        for (const auto& task : j.at("tasks")) {
            std::vector<TaskRun> runs;
            for (const auto& r : task.at("runs")) {
                TaskRun t;
                t.run_id = r.at("run_id").get<int64_t>();
                t.arm = r.at("arm").get<std::string>();
                t.arm_index = r.at("arm_index").get<int>();
                t.seed = r.at("seed").get<uint64_t>();
                t.arm_json = r.at("arm_json").get<std::string>();
                t.planned_steps = r.at("planned_steps").get<int64_t>();
                t.inputs_json = r.value("inputs_json", std::string());
                runs.push_back(std::move(t));
            }
            list.tasks.push_back(std::move(runs));
        }
    } catch (const nlohmann::json::exception& e) {
        throw std::runtime_error(path + ": " + e.what());
    }
    return list;
}

}  // namespace ampbench::launch
