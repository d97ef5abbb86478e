#pragma once
// What `launch`, `status` and `cancel` ask of the place an experiment runs: this
// machine (a detached process, LocalLauncher.cpp) or a cluster's scheduler (one job
// array, ArrayLauncher.cpp, over any launch::Scheduler). The job file names the
// launcher (Job::scheduler), and launcherFor, the one place a launcher is chosen,
// finds it again from that name.
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/Commands.h"
#include "cli/JobFiles.h"
#include "core/store/Rows.h"

namespace ampbench::launch {
class Scheduler;
}

namespace ampbench::cli {

class Launcher {
  public:
    virtual ~Launcher() = default;
    /// Plans the experiment in the database, starts it and prints one JSON line (the
    /// experiment id, the process that records it, its log, the runs); the exit code.
    virtual int launch(const std::string& db_path, const config::ValidSpec& spec,
                       const LaunchOptions& options) = 0;
    /// The experiment's state ("pending", "running", "finished", "failed",
    /// "cancelled", "interrupted") and its runs as `status --json` shows them, with
    /// what the scheduler says of each. `job` is null for an experiment never launched.
    virtual nlohmann::json describe(const std::string& db_path, const Job* job,
                                    const std::vector<store::RunRow>& runs) = 0;
    /// Stops the experiment: its runs end cancelled, their rows kept; the exit code.
    virtual int cancel(const std::string& db_path, const Job& job, double timeout_s) = 0;
    /// `launch --resume`: a new collector for a job whose collector died; prints one
    /// JSON line. The exit code (refused where the runs trained inside the job).
    virtual int resume(const std::string& db_path, const Job& job, double wait_s) = 0;
};

/// The launcher a job file or `launch` names: "" for this machine, a scheduler's name
/// (launch::schedulers()) for its job arrays; null for a name this build lacks.
std::unique_ptr<Launcher> launcherFor(const std::string& scheduler);

/// A status run entry, the same for every launcher.
nlohmann::json runJson(const store::RunRow& r, bool job_dead);
/// What became of an experiment recorded by a process of this machine (its job, or
/// a collector), from that process's state and the runs.
std::string jobState(JobProcess process, bool has_job, const std::vector<store::RunRow>& runs);

/// `array-task`: one task of a launched job array, on its node (ArrayTask.cpp). Its
/// stream's first name tried is attempt `attempt` (the scheduler's restart count).
int commandArrayTask(const std::string& dir, int task, int attempt);

// The launchers, made only by launcherFor (Launchers.cpp).
std::unique_ptr<Launcher> makeLocalLauncher();
std::unique_ptr<Launcher> makeArrayLauncher(const launch::Scheduler& scheduler);

}  // namespace ampbench::cli
