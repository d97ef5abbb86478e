#pragma once
// What `launch`, `status` and `cancel` ask of the place an experiment runs: this
// machine (a detached process, LocalLauncher) or a cluster's scheduler (a Slurm job
// array, SlurmLauncher). Another scheduler (PBS, LSF) is one more class: it plans the
// experiment in the database here, starts its runs, says what the scheduler knows
// of them and cancels them; the job file names the launcher (Job::scheduler).
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/Commands.h"
#include "cli/JobFiles.h"
#include "core/store/Rows.h"

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
};

std::unique_ptr<Launcher> makeLocalLauncher();
std::unique_ptr<Launcher> makeSlurmLauncher();
/// The launcher a job file names ("" for the local one); null for one this build lacks.
std::unique_ptr<Launcher> launcherFor(const std::string& scheduler);

/// A status run entry, the same for every launcher.
nlohmann::json runJson(const store::RunRow& r, bool job_dead);
/// What became of an experiment recorded by a process of this machine (its job, or
/// a collector), from that process's state and the runs.
std::string jobState(JobProcess process, bool has_job, const std::vector<store::RunRow>& runs);

/// `launch --resume --experiment ID`: a new collector for a Slurm experiment whose
/// collector died; refused while one lives (naming its pid). Prints one JSON line.
int resumeCollector(const std::string& db_path, int64_t experiment_id, double wait_s);

/// `slurm-task`: one task of a launched job array, on its node (SlurmTask.cpp).
int commandSlurmTask(const std::string& dir, int task);

}  // namespace ampbench::cli
