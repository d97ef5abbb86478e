// Slurm's client tools and what they say of a job array (Slurm.h).
#include "core/launch/Slurm.h"

#include <algorithm>
#include <set>
#include <sstream>

#include "core/launch/Program.h"
#include "core/launch/TaskList.h"

namespace ampbench::launch {
namespace slurm {

namespace {

/// How a task in the state Slurm names has ended, and whether it waits to start.
void classify(TaskState& t) {
    t.pending = t.state == "PENDING";
    if (!terminalState(t.state)) {
        t.end = TaskEnd::None;
    } else if (t.state == "COMPLETED") {
        t.end = TaskEnd::Completed;
    } else if (t.state == "TIMEOUT" || t.state == "DEADLINE") {
        t.end = TaskEnd::TimedOut;
    } else if (t.state == "PREEMPTED") {
        t.end = TaskEnd::Preempted;
    } else if (t.state == "CANCELLED") {
        t.end = TaskEnd::Cancelled;
    } else {
        t.end = TaskEnd::Failed;
    }
}

std::string partitionProblem(const std::string& value) {
    return value.find_first_not_of(
               "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
               "0123456789_.,-") == std::string::npos
               ? std::string()
               : "letters, digits, \"_.-\" and commas only";
}

std::string timeProblem(const std::string& value) {
    return value.find_first_not_of("0123456789:-") == std::string::npos
               ? std::string()
               : "as sbatch --time takes it (MINUTES, HH:MM:SS, D-HH:MM)";
}

std::string optionProblem(const std::string& value) {
    return !value.empty() && value.front() == '-' ? std::string()
                                                  : "each begins with \"-\" (--qos=long)";
}

}  // namespace

bool terminalState(const std::string& state) {
    static const std::set<std::string> terminal = {
        "COMPLETED", "FAILED",   "TIMEOUT",   "CANCELLED", "NODE_FAIL",   "OUT_OF_MEMORY",
        "BOOT_FAIL", "DEADLINE", "PREEMPTED", "REVOKED",   "SPECIAL_EXIT"};
    return terminal.count(state) > 0;
}

namespace {
/// Calls `each` with the fields of every '|'-separated line of `text` about array
/// `job_id` (its first field "ID_…", seven fields at least), as squeue and sacct print them.
template <class Each>
void eachTaskLine(const std::string& text, const std::string& job_id, Each each) {
    std::stringstream lines(text);
    std::string line;
    while (std::getline(lines, line)) {
        const auto f = splitFields(trimmed(line), '|');
        if (f.size() >= 7 && f[0].rfind(job_id + "_", 0) == 0) {
            each(f);
        }
    }
}
}  // namespace

std::map<int, TaskState> parseSqueue(const std::string& text, const std::string& job_id) {
    std::map<int, TaskState> out;
    eachTaskLine(text, job_id, [&](const std::vector<std::string>& f) {
        TaskState t;
        t.state = f[2];
        t.reason = f[3];
        t.node = f[4];
        t.time_limit = f[5];
        t.time_used = f[6];
        t.source = "squeue";
        classify(t);
        for (int i : taskIndices(f[1])) {
            out[i] = t;
        }
    });
    return out;
}

std::map<int, TaskState> parseSacct(const std::string& text, const std::string& job_id) {
    std::map<int, TaskState> out;
    eachTaskLine(text, job_id, [&](const std::vector<std::string>& f) {
        TaskState t;
        t.state = f[1].substr(0, f[1].find(' '));  // "CANCELLED by 0"
        t.reason = f[2];
        t.node = f[3];
        t.time_limit = f[4];
        t.time_used = f[5];
        t.exit_code = f[6];
        t.source = "sacct";
        classify(t);
        for (int i : taskIndices(f[0].substr(job_id.size() + 1))) {
            out[i] = t;
        }
    });
    return out;
}

std::string parsableJobId(const std::string& out) {
    const std::string text = trimmed(out);
    const std::string id = text.substr(0, text.find(';'));
    if (id.empty() || id.size() > 18 || id.find_first_not_of("0123456789") != std::string::npos) {
        return {};
    }
    return id;
}

}  // namespace slurm

namespace {

class SlurmScheduler final : public Scheduler {
  public:
    const SchedulerInfo& info() const override {
        static const SchedulerInfo info = {
            "slurm",
            "Slurm",
            "a task per run, or per group of runs_per_gpu runs trained side by side, submitted "
            "with sbatch --array",
            {"sbatch", "squeue", "sacct", "scancel"},
            {"sacct"},
            "squeue",
            "scancel",
            "Launching there needs sbatch, squeue and scancel, and sacct tells how a task "
            "ended once squeue has forgotten it",
            {
                {"partition", "--partition", OptionKind::Text, "Pa&rtition:", "Slurm partition",
                 "the cluster's default", 0, 0, slurm::partitionProblem},
                {"gpus_per_task", "--gpus-per-task", OptionKind::Count, "&GPUs per task:",
                 "GPUs each task asks Slurm for", "none asked for", 0, 64, nullptr},
                {"time_limit", "--time-limit", OptionKind::Text, "T&ime limit:",
                 "each task's time limit, as sbatch --time takes it: MINUTES, HH:MM:SS, D-HH:MM",
                 "the partition's default; e.g. 2:00:00", 0, 0, slurm::timeProblem},
                {"sbatch_options", "--sbatch-option", OptionKind::Words, "s&batch options:",
                 "one more sbatch option, passed as it is, e.g. --sbatch-option=--qos=long "
                 "(repeatable)",
                 "more sbatch options, e.g. --qos=long", 0, 0, slurm::optionProblem},
            },
        };
        return info;
    }

    std::string batchScript(const ArrayJob& job) const override {
        // Slurm counts a task's restarts (requeue, preemption, node failure): the
        // attempt whose stream name the task tries first.
        return "#!/bin/sh\n# Experiment " + std::to_string(job.experiment_id) + " of " +
               job.db_path + ": one task per group of " + std::to_string(job.runs_per_task) +
               " runs (written by ampbench-cli launch --slurm)\nexec " + shellQuote(job.program) +
               " array-task --dir " + shellQuote(job.dir) +
               " --task \"$SLURM_ARRAY_TASK_ID\" --attempt \"${SLURM_RESTART_COUNT:-0}\"\n";
    }

    std::vector<std::string> submitCommand(const ArrayJob& job,
                                           const std::string& script) const override {
        std::vector<std::string> argv = {"sbatch",
                                         "--parsable",
                                         "--array=0-" + std::to_string(job.tasks - 1),
                                         "--job-name=ampbench-" + std::to_string(job.experiment_id),
                                         "--output=" + job.dir + "/task-%a.out",
                                         "--open-mode=append"};
        if (const std::string p = optionWord(job.options, "partition"); !p.empty()) {
            argv.push_back("--partition=" + p);
        }
        if (const int gpus = optionCount(job.options, *findOption(info(), "gpus_per_task"));
            gpus > 0) {
            argv.push_back("--gpus-per-task=" + std::to_string(gpus));
        }
        if (const std::string t = optionWord(job.options, "time_limit"); !t.empty()) {
            argv.push_back("--time=" + t);
        }
        for (const auto& o : optionWords(job.options, "sbatch_options")) {
            argv.push_back(o);
        }
        argv.push_back(script);
        return argv;
    }

    Submission submit(const ArrayJob& job, const std::string& script) const override {
        return submitArray(submitCommand(job, script), slurm::parsableJobId);
    }

    ArrayView query(const std::string& job_id, bool ask_accounting,
                    QueryMemory& memory) const override;

    std::string cancel(const std::string& job_id) const override {
        const ProgramResult r = runProgram({"scancel", job_id});
        if (r.ok() || r.words().find("Invalid job id") != std::string::npos) {
            return {};  // an id Slurm no longer knows: nothing is left to cancel
        }
        return "scancel " + job_id + " refused (exit " + std::to_string(r.exit_code) +
               "): " + r.words();
    }

    std::string taskName(const std::string& job_id, int index) const override {
        return "Slurm task " + job_id + "_" + std::to_string(index);
    }
};

ArrayView SlurmScheduler::query(const std::string& job_id, bool ask_accounting,
                                QueryMemory& memory) const {
    ArrayView view;
    const ProgramResult q =
        runProgram({"squeue", "-h", "-r", "-t", "all", "-j", job_id, "-o", "%i|%K|%T|%r|%N|%l|%M"});
    if (q.ok()) {
        view.answered = true;
        view.tasks = slurm::parseSqueue(q.out, job_id);
    } else if (q.err.find("Invalid job id") != std::string::npos) {
        view.answered = true;  // the controller has forgotten the job: it ended long ago
    } else {
        view.problem = "squeue: " + q.words();
    }
    if (ask_accounting && memory.accounting) {
        const ProgramResult a =
            runProgram({"sacct", "-n", "-P", "-X", "-j", job_id, "-o",
                        "JobID,State,Reason,NodeList,Timelimit,Elapsed,ExitCode"});
        if (a.ok()) {
            for (auto& [index, task] : slurm::parseSacct(a.out, job_id)) {
                auto it = view.tasks.find(index);
                if (it == view.tasks.end()) {
                    view.tasks[index] = task;
                } else if (!task.exit_code.empty()) {
                    it->second.exit_code = task.exit_code;
                }
            }
        } else if (a.words().find("accounting storage is disabled") != std::string::npos ||
                   a.words().find("not configured") != std::string::npos) {
            memory.accounting = false;
        }
    }
    return view;
}

}  // namespace

const Scheduler& slurmScheduler() {
    static const SlurmScheduler instance;
    return instance;
}

}  // namespace ampbench::launch
