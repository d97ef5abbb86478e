#pragma once
#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/config/ExperimentSpec.h"
#include "core/config/Validation.h"
#include "core/launch/LaunchOption.h"

namespace ampbench::store {
class Database;
}
namespace ampbench::analysis {
struct ExperimentData;
}
namespace ampbench::script {
struct ScriptSettings;
}

namespace ampbench::cli {

/// Flags of `run` that override fields of the preset or config file. Unset
/// optionals leave the spec as it is.
struct RunOverrides {
    std::string preset;
    std::string config_file;
    std::string name;
    std::optional<std::string> model;
    std::optional<std::string> dataset;
    std::optional<std::string> data_dir;  ///< --data: a folder or file, its kind from what it is
    std::optional<std::string> save_weights;
    /// The flags that set one spec field each (SpecFlags.h): the text given, by the
    /// field's path ("micro_steps", "optimizer.lr"); a bool field's switch by its path.
    std::map<std::string, std::optional<std::string>> fields;
    std::map<std::string, bool> switches;
    std::vector<uint64_t> seeds;
    std::vector<std::string> arms;               ///< shorthand; replaces the preset's arms
    std::optional<config::ExperimentSpec> base;  ///< start from this spec, not a preset/file
    std::string save_spec;                       ///< write the resolved spec here
    bool dry_run = false;
    bool quiet = false;
    bool stream = false;  ///< --stream: the record stream on stdout, human output on stderr
    // --script: the user's own training script trains each run (ScriptRun.cpp).
    std::string script;                    ///< the Python script; empty: the built-in trainer
    std::vector<std::string> script_args;  ///< --script-arg, passed to the script in order
    std::string python;                    ///< interpreter; empty: $AMPBENCH_PYTHON, else python3
    double script_silence_s = 900;         ///< a script silent this long is stopped (0: never)
};

struct FindBatchOptions {
    int64_t experiment_id = 0;  ///< search this experiment's arms and record under it; 0 = none
    int64_t budget_bytes = 0;   ///< 0: device limit (CUDA) or half the RAM (CPU)
    double margin = 0.05;
    int64_t start = 8;
    int64_t upper_bound = 65536;
    int trial_steps = 3;
    int max_trials = 30;
    double resolution = 0.0;
};

int commandRun(const std::string& db_path, const RunOverrides& o);
/// Trains a checked spec (preflight passed, on `device`) into the database and prints
/// the table, then each arm's verdict, or for a rerun (`rerun_of` > 0, the run it
/// repeats) how it compares with its original.
/// With `script` (prepared by prepareScript) the user's training script trains each run.
int trainSpec(const std::string& db_path, const config::ValidSpec& spec, const std::string& device,
              bool quiet, int64_t rerun_of = 0, std::FILE* stream = nullptr,
              const script::ScriptSettings* script = nullptr);
/// Trains run `run_id` again as a new run linked to it (see train::planRerun); refuses
/// before training (exit 7) when its files or environment changed or it is still
/// training in another process, unless `force`; exit 4 when its stored records
/// cannot be read.
int commandRerun(const std::string& db_path, int64_t run_id, bool force, bool quiet);
int commandFindBatch(const std::string& db_path, const RunOverrides& o, const FindBatchOptions& f);
int commandList(const std::string& db_path);
/// One run, or with `experiment` an experiment's table and each arm's verdict; with
/// `json` the experiment's analysis as JSON on stdout (what a report's JSON holds).
int commandShow(const std::string& db_path, int64_t run_id, bool experiment, bool json = false);
/// A run's per-layer numerics: the worst layers by underflow and by headroom.
int commandShowNumerics(const std::string& db_path, int64_t run_id);
int commandExport(const std::string& db_path, const std::vector<int64_t>& run_ids,
                  const std::string& csv, const std::string& json, bool experiment);
int commandPresets();

/// `tail`: the record stream of runs in the database (StreamCommands.cpp).
struct TailOptions {
    int64_t run_id = 0;
    int64_t experiment_id = 0;
    std::vector<std::string> since;  ///< "SEQ" for every run, or "RUN:SEQ" pairs
    bool follow = false;
    bool stream = false;
    int poll_ms = 200;
};
int commandTail(const std::string& db_path, const TailOptions& o);
/// `ingest`: a record stream (a file, or "-" for stdin) into the database.
int commandIngest(const std::string& db_path, const std::string& file, const std::string& origin);

/// `launch`: the spec from flags, a file or (config_stdin) JSON on stdin.
struct LaunchOptions {
    bool config_stdin = false;
    double wait_s = 300;  ///< for the job to plan its experiment (its setup check)
    // A scheduler (launch --slurm, --gridengine, ...): one job array, a task per run (or
    // per group of runs_per_gpu runs), submitted with the scheduler's options
    // (LaunchFlags.cpp makes the flags from each scheduler's declaration).
    std::string scheduler;                   ///< its name; empty: this machine
    launch::OptionValues scheduler_options;  ///< by option key, checked against its declaration
    /// The scheduler flags as parsed (LaunchFlags.cpp): each switch, and each option's
    /// words by flag, before they are sorted to the scheduler chosen.
    std::map<std::string, bool> scheduler_switches;
    std::map<std::string, std::vector<std::string>> scheduler_flags;
    // launch --resume --experiment ID: a new collector for a job array's experiment.
    bool resume = false;
    int64_t experiment = 0;
    /// The user's training script trains the runs (checked by prepareScript): only a
    /// job of this machine does that.
    const script::ScriptSettings* script = nullptr;
};
/// Starts the experiment as a detached job (it outlives the terminal or SSH session)
/// that trains into the database as `run` does, waits until it planned the
/// experiment, and prints one JSON line: experiment_id, pid, log, runs, version.
/// When the job fails before that, prints its output and returns its exit code.
int commandLaunch(const std::string& db_path, RunOverrides o, const LaunchOptions& l);
/// Launched jobs (or one experiment): running, finished, failed, cancelled or
/// interrupted, and each run's progress; as JSON with `json`.
int commandStatus(const std::string& db_path, int64_t experiment_id, bool json);
/// SIGTERM to the experiment's job, then waits until it stopped (its runs cancelled,
/// their rows kept), at most `timeout_s`.
int commandCancel(const std::string& db_path, int64_t experiment_id, double timeout_s);
/// What this machine offers remote runs: version, CPU, CUDA devices, and the
/// entries of a data folder.
int commandHost(const std::string& data_dir, bool json);

/// One rank (1 … world-1) of a data-parallel run, started by rank 0 (hidden
/// `rank-worker`): trains its shard of run `run_id`; exit 0 when it finished.
struct RankWorkerOptions {
    int64_t run_id = 0;
    int rank = 1;
    int world = 2;
    std::string store;
    double timeout_s = 300;
    int first_gpu = 0;
};
int commandRankWorker(const std::string& db_path, const RankWorkerOptions& o);

/// Before anything is written: resolves the device, opens the data and the model and
/// trains one batch (train::checkSetup). Returns kOk and sets `device`, or the exit
/// code after printing why: 3 for an unreadable file, 2 for files that do not fit.
int preflight(const config::ExperimentSpec& spec, std::string& device, bool quiet = false);

/// Whether every run's stored arm (runs.spec_json) of the experiment can be read;
/// prints each one that cannot (run, field, database) on stderr. The verdict reads
/// the arms, so a command that judges refuses with exit 4 when one cannot.
bool storedArmsReadable(const analysis::ExperimentData& data, const std::string& db_path);

/// Each arm's verdict against the baseline, one line each, and for an A/A arm what
/// it says of the noise; nothing when the experiment has no runs to judge.
void printVerdicts(const store::Database& db, int64_t experiment_id);

/// The table an experiment's training ends with: the spec's name, each arm's row,
/// the machine of its first run, how speed-up and memory read (`timing`: where the
/// step times come from; `cpu_memory`: what the memory column is where a CPU run
/// measured its process's resident set, as a training script does), and the
/// fast verdict's caveat where it packed the runs on a GPU.
void printArmTable(const store::Database& db, const config::ExperimentSpec& spec,
                   int64_t experiment_id, const std::string& device, const char* timing,
                   const char* cpu_memory);

/// Builds the spec from a preset or file plus overrides and validates it; errors go to
/// stderr. Nullopt when the spec could not be built or is invalid.
std::optional<config::ValidSpec> buildSpec(const RunOverrides& o);
/// "<what>:" then one line per field error, on stderr; an arm's by its name (from
/// `arms`) and row.
void printErrors(const std::string& what, const std::vector<config::FieldError>& errors,
                 const std::vector<config::ArmSpec>& arms = {});

}  // namespace ampbench::cli
