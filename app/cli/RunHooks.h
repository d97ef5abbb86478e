#pragma once
// What every CLI command that trains tells the user while it trains, wired once: the
// line that starts the experiment, a progress line per run, the notes of how it
// trains, a run whose rows could not be recorded, and the exit code at the end.
#include <functional>
#include <memory>
#include <string>

#include "cli/Progress.h"
#include "core/config/ExperimentSpec.h"
#include "core/script/ScriptRun.h"
#include "core/train/Experiment.h"

namespace ampbench::cli {

class RunHooks {
  public:
    struct Options {
        const config::ExperimentSpec* spec = nullptr;
        std::string device;
        std::string db_path;
        /// The script's settings where a script trains the runs (its command line and
        /// how the runs are packed go into the first line); null for the built-in trainer.
        const script::ScriptSettings* script = nullptr;
        bool quiet = false;
        bool terminal = false;  ///< stderr is a terminal: a redrawn progress bar
        /// Heard when the experiment is planned, after its first line (a stream, a job's files).
        std::function<void(const train::ExperimentPlan&)> planned;
        /// Heard after each run ends (a line of the front end's own).
        std::function<void(const train::PlannedRun&, const run::RunOutcome&)> finished;
    };
    explicit RunHooks(Options options);
    RunHooks(const RunHooks&) = delete;
    RunHooks& operator=(const RunHooks&) = delete;

    const train::ExperimentHooks& hooks() const { return hooks_; }
    /// The exit code of an experiment trained with these hooks: cancelled (Ctrl-C,
    /// SIGTERM), a run that failed or did not finish, or success.
    int exitCode(const train::ExperimentResult& result, const run::CancelToken& cancel) const;

  private:
    Options options_;
    train::ExperimentHooks hooks_;
    std::unique_ptr<Progress> progress_;
    int index_ = 0;
    bool unfinished_ = false;
};

/// Calls `train` and turns what it throws into an exit code after saying it on stderr: a
/// damaged file (store error), a spec or set-up problem, missing or unreadable data,
/// any other error (usage). kOk when it returned.
int sayingWhatStopped(const std::function<void()>& train);

}  // namespace ampbench::cli
