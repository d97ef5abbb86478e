// `ampbench-cli status`: launched experiments, each as its launcher describes it
// (Launcher::describe), as JSON or one line per experiment and run.
#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>

#include "cli/Commands.h"
#include "cli/ExitCodes.h"
#include "cli/JobFiles.h"
#include "cli/Launcher.h"
#include "cli/OpenDatabase.h"
#include "cli/Terminal.h"
#include "core/analysis/Format.h"
#include "core/launch/Scheduler.h"
#include "core/store/Database.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace ampbench::cli {

int commandStatus(const std::string& db_path, int64_t experiment_id, bool as_json) {
    std::unique_ptr<store::Database> db = openOrSay(db_path, store::Database::Mode::ReadOnly);
    if (!db) {
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
    json out = json::array();
    for (const auto& e : entries) {
        const auto runs = db->runs(e.id);
        const auto experiment = db->experiment(e.id);
        auto launcher = launcherFor(e.job ? e.job->scheduler : std::string());
        json j = {{"experiment_id", e.id}, {"name", experiment ? experiment->name : std::string()}};
        j.update(launcher->describe(db_path, e.job ? &*e.job : nullptr, runs));
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
            // Whether its process still runs is not known; the other jobs are listed.
            j["state"] = "unknown";
            j["job_file_problem"] = e.problem;
            if (as_json) {
                say(stderr, "status: %s\n", e.problem.c_str());
            }
        }
        out.push_back(j);
    }
    if (as_json) {
        printJson(json{{"jobs", out}});
        return kOk;
    }
    if (out.empty()) {
        say(stdout, "no launched jobs in %s\n", db_path.c_str());
        return kOk;
    }
    for (const auto& j : out) {
        say(stdout, "experiment %lld '%s': %s", static_cast<long long>(j["experiment_id"]),
            analysis::printable(j["name"].get<std::string>(), false).c_str(),
            j["state"].get<std::string>().c_str());
        const std::string scheduler = j.value("scheduler", std::string());
        const launch::Scheduler* sched = launch::schedulerNamed(scheduler);
        const std::string title = sched ? sched->info().title : scheduler;
        if (sched != nullptr && j.contains(scheduler)) {
            const json& s = j[scheduler];
            say(stdout, " (%s job %s, collector pid %d, log %s)", title.c_str(),
                s.value("job_id", std::string()).c_str(), j.value("pid", 0),
                analysis::printable(j.value("log", std::string()), false).c_str());
            if (s.contains("problem")) {
                say(stdout, "; %s",
                    analysis::printable(s["problem"].get<std::string>(), false).c_str());
            }
        } else if (j.contains("pid")) {
            say(stdout, " (pid %d, log %s)", j["pid"].get<int>(),
                analysis::printable(j["log"].get<std::string>(), false).c_str());
        } else if (j.contains("job_file_problem")) {
            say(stdout, " (%s)",
                analysis::printable(j["job_file_problem"].get<std::string>(), false).c_str());
        }
        say(stdout, "\n");
        for (const auto& r : j["runs"]) {
            const int64_t planned = r["planned_steps"];
            const int64_t step = r["step"];
            say(stdout, "  run %lld %-12s seed %-3llu %-11s step %lld/%lld (%.0f%%)",
                static_cast<long long>(r["id"]),
                analysis::printable(r["arm"].get<std::string>(), false).c_str(),
                static_cast<unsigned long long>(r["seed"].get<uint64_t>()),
                r["status"].get<std::string>().c_str(), static_cast<long long>(step),
                static_cast<long long>(planned),
                planned > 0 ? 100.0 * static_cast<double>(step) / static_cast<double>(planned)
                            : 0.0);
            if (sched != nullptr && r.contains(scheduler)) {
                const json& t = r[scheduler];
                std::string reason = t.value("reason", std::string());
                say(stdout, "  [%s task %d: %s%s%s]", title.c_str(), t.value("task", 0),
                    t.value("state", std::string("unknown")).c_str(),
                    reason.empty() || reason == "None" ? "" : ", ",
                    reason.empty() || reason == "None" ? "" : reason.c_str());
            }
            say(stdout, "\n");
        }
    }
    return kOk;
}

}  // namespace ampbench::cli
