// Grid Engine's client tools and what they say of a task array (GridEngine.h).
#include "core/launch/GridEngine.h"

#include <pwd.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <sstream>

#include "core/launch/Program.h"
#include "core/launch/TaskList.h"

namespace ampbench::launch {
namespace gridengine {

namespace {

/// The text of the first <tag>...</tag> in `block`, its entities decoded.
std::string element(const std::string& block, const std::string& tag) {
    const std::string open = "<" + tag + ">";
    const size_t start = block.find(open);
    if (start == std::string::npos) {
        return {};
    }
    const size_t end = block.find("</" + tag + ">", start);
    if (end == std::string::npos) {
        return {};
    }
    std::string text = block.substr(start + open.size(), end - start - open.size());
    std::string out;
    for (size_t i = 0; i < text.size(); ++i) {
        if (text[i] != '&') {
            out += text[i];
            continue;
        }
        const size_t semi = text.find(';', i);
        const std::string entity = semi == std::string::npos ? "" : text.substr(i, semi - i + 1);
        const char* plain = entity == "&amp;"    ? "&"
                            : entity == "&lt;"   ? "<"
                            : entity == "&gt;"   ? ">"
                            : entity == "&quot;" ? "\""
                            : entity == "&apos;" ? "'"
                                                 : nullptr;
        if (plain == nullptr) {
            out += '&';
        } else {
            out += plain;
            i = semi;
        }
    }
    return out;
}

/// A task in qstat's state letters (qw, hqw, r, Rr, dr, Eqw, ...), in words.
void classifyLetters(TaskState& t, const std::string& letters) {
    const auto has = [&](char c) { return letters.find(c) != std::string::npos; };
    if (has('d')) {
        t.state = "DELETING";
        t.reason = letters + ": being deleted";
    } else if (has('E')) {
        t.state = "ERROR";
        t.pending = true;
        t.reason = letters + ": in error state (qstat -j tells why, qmod -cj clears it)";
    } else if (has('h')) {
        t.state = "HELD";
        t.pending = true;
        t.reason = letters + ": held (qrls releases it)";
    } else if (has('q') || has('w')) {
        t.state = has('R') ? "REQUEUED" : "PENDING";
        t.pending = true;
        t.reason = letters + ": waiting for a slot";
    } else if (has('s') || has('S') || has('T')) {
        t.state = "SUSPENDED";
        t.reason = letters;
    } else if (has('r') || has('t')) {
        t.state = "RUNNING";
        t.reason = has('R') ? letters + ": restarted" : "None";
    } else {
        t.state = letters;
    }
}

/// "37  : qmaster enforced h_rt, h_cpu, or h_vmem limit" as 37 and its words.
int failedCode(const std::string& field, std::string& words) {
    const size_t colon = field.find(':');
    words = colon == std::string::npos ? std::string() : trimmed(field.substr(colon + 1));
    return std::atoi(field.c_str());
}

}  // namespace

std::map<int, TaskState> parseQstatXml(const std::string& xml, const std::string& job_id) {
    std::map<int, TaskState> out;
    for (size_t at = 0; (at = xml.find("<job_list", at)) != std::string::npos;) {
        const size_t end = xml.find("</job_list>", at);
        if (end == std::string::npos) {
            break;
        }
        const std::string block = xml.substr(at, end - at);
        at = end;
        if (trimmed(element(block, "JB_job_number")) != job_id) {
            continue;
        }
        TaskState t;
        t.source = "qstat";
        classifyLetters(t, trimmed(element(block, "state")));
        const std::string queue = element(block, "queue_name");
        t.node =
            queue.substr(queue.find('@') == std::string::npos ? queue.size() : queue.find('@') + 1);
        for (int task : taskIndices(trimmed(element(block, "tasks")))) {
            if (task >= 1) {
                out[task - 1] = t;
            }
        }
    }
    return out;
}

std::map<int, TaskState> parseQacct(const std::string& text, const std::string& job_id) {
    std::map<int, TaskState> out;
    std::map<std::string, std::string> record;
    const auto finish = [&] {
        if (record.empty() || trimmed(record["jobnumber"]) != job_id) {
            record.clear();
            return;
        }
        const int task = std::atoi(record["taskid"].c_str());
        std::string words;
        const int failed = failedCode(record["failed"], words);
        const std::string exit_status = trimmed(record["exit_status"]);
        const int status = std::atoi(exit_status.c_str());
        TaskState t;
        t.source = "qacct";
        t.node = trimmed(record["hostname"]);
        t.time_used = trimmed(record["ru_wallclock"]);
        t.exit_code = exit_status.substr(0, exit_status.find(' '));
        record.clear();
        if (task < 1) {
            return;
        }
        if (failed == 25) {  // rescheduled: this attempt ended, the task runs again
            out.erase(task - 1);
            return;
        }
        if (failed == 0 && status == 0) {
            t.state = "COMPLETED";
            t.end = TaskEnd::Completed;
            t.reason = "None";
        } else if (failed == 37) {  // "qmaster enforced h_rt, h_cpu, or h_vmem limit"
            t.state = "TIMEOUT";
            t.end = TaskEnd::TimedOut;
            t.reason = "failed 37: " + words;
        } else if (failed == 0) {  // it exited otherwise (130: our task heard a qdel)
            t.state = "EXITED";
            t.end = TaskEnd::Failed;
            t.reason = "exit status " + t.exit_code;
        } else {
            t.state = "FAILED";
            t.end = TaskEnd::Failed;
            t.reason = "failed " + std::to_string(failed) + ": " + words;
        }
        out[task - 1] = t;
    };
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
        if (line.rfind("=====", 0) == 0) {
            finish();
            continue;
        }
        const size_t space = line.find_first_of(" \t");
        if (space == std::string::npos) {
            continue;
        }
        record[line.substr(0, space)] = trimmed(line.substr(space));
    }
    finish();
    return out;
}

std::string terseJobId(const std::string& out) {
    const std::string text = trimmed(out);
    const std::string id = text.substr(0, text.find('.'));
    if (id.empty() || id.size() > 18 || id.find_first_not_of("0123456789") != std::string::npos) {
        return {};
    }
    return id;
}

namespace {

std::string queueProblem(const std::string& value) {
    return value.find_first_not_of(
               "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
               "0123456789_.,@*-") == std::string::npos
               ? std::string()
               : "a queue as qsub -q takes it: letters, digits, \"_.-\", \"@host\", commas";
}

std::string timeProblem(const std::string& value) {
    return value.find_first_not_of("0123456789:") == std::string::npos
               ? std::string()
               : "as qsub -l h_rt takes it (SECONDS or HH:MM:SS)";
}

}  // namespace
}  // namespace gridengine

namespace {

/// This user's name: qstat lists only the jobs of the users it is given.
std::string userName() {
    if (const passwd* pw = ::getpwuid(::geteuid()); pw != nullptr && pw->pw_name != nullptr) {
        return pw->pw_name;
    }
    const char* user = std::getenv("USER");
    return user ? user : "";
}

class GridEngineScheduler final : public Scheduler {
  public:
    const SchedulerInfo& info() const override {
        static const SchedulerInfo info = {
            "gridengine",
            "Grid Engine",
            "a task per run, or per group of runs_per_gpu runs trained side by side, submitted "
            "with qsub -t",
            {"qsub", "qstat", "qacct", "qdel"},
            {},
            "qstat",
            "qdel",
            "Launching there needs qsub, qstat, qacct (how a task ended once it left the "
            "queue) and qdel",
            {
                {"queue", "--queue", OptionKind::Text,
                 "&Queue:", "Grid Engine queue, as qsub -q takes it", "any queue the tasks fit", 0,
                 0, gridengine::queueProblem},
                {"time_limit", "--time-limit", OptionKind::Text, "T&ime limit:",
                 "each task's time limit, as qsub -l h_rt takes it: SECONDS or HH:MM:SS",
                 "the queue's limit; e.g. 2:00:00", 0, 0, gridengine::timeProblem},
                {"qsub_options", "--qsub-option", OptionKind::Words, "qs&ub options:",
                 "one more qsub argument, passed as it is, e.g. --qsub-option=-P "
                 "--qsub-option=myproject (repeatable)",
                 "more qsub arguments, e.g. -P myproject", 0, 0, nullptr},
            },
        };
        return info;
    }

    std::string batchScript(const ArrayJob& job) const override {
        const std::string dir = shellQuote(job.dir);
        return "#!/bin/sh\n# Experiment " + std::to_string(job.experiment_id) + " of " +
               job.db_path + ": one task per group of " + std::to_string(job.runs_per_task) +
               " runs (written by ampbench-cli launch --gridengine)\n"
               "# Grid Engine numbers the tasks from 1, the experiment from 0.\n"
               "task=$((SGE_TASK_ID - 1))\n"
               "exec >>" +
               dir + "/task-\"$task\".out 2>&1\nexec " + shellQuote(job.program) +
               " array-task --dir " + dir + " --task \"$task\"\n";
    }

    std::vector<std::string> submitCommand(const ArrayJob& job,
                                           const std::string& script) const override {
        // -V: the tasks see launch's environment, as Slurm's do; -wd: they start in the
        // experiment's folder, not in a home a node may not have; -o: Grid Engine's own
        // words (a script it could not start) land there too.
        std::vector<std::string> argv = {"qsub", "-terse",
                                         "-t",   "1-" + std::to_string(job.tasks),
                                         "-N",   "ampbench-" + std::to_string(job.experiment_id),
                                         "-S",   "/bin/sh",
                                         "-wd",  job.dir,
                                         "-o",   job.dir,
                                         "-j",   "y",
                                         "-V",   "-notify"};
        if (const std::string q = optionWord(job.options, "queue"); !q.empty()) {
            argv.insert(argv.end(), {"-q", q});
        }
        if (const std::string t = optionWord(job.options, "time_limit"); !t.empty()) {
            argv.insert(argv.end(), {"-l", "h_rt=" + t});
        }
        for (const auto& o : optionWords(job.options, "qsub_options")) {
            argv.push_back(o);
        }
        argv.push_back(script);
        return argv;
    }

    Submission submit(const ArrayJob& job, const std::string& script) const override {
        return submitArray(submitCommand(job, script), gridengine::terseJobId);
    }

    ArrayView query(const std::string& job_id, bool ask_accounting,
                    QueryMemory& memory) const override {
        ArrayView view;
        const ProgramResult q = runProgram({"qstat", "-xml", "-g", "d", "-u", userName()});
        if (!q.ok()) {
            view.problem = "qstat: " + q.words();
            return view;
        }
        view.answered = true;
        view.tasks = gridengine::parseQstatXml(q.out, job_id);
        if (ask_accounting && memory.accounting) {
            // Until the qmaster writes its record ("job id N not found", or no
            // accounting file yet) a task that left the queue is not listed here.
            const ProgramResult a = runProgram({"qacct", "-j", job_id});
            if (a.ok()) {
                for (auto& [index, task] : gridengine::parseQacct(a.out, job_id)) {
                    view.tasks.emplace(index, task);  // qstat's word on a live task stands
                }
            }
        }
        return view;
    }

    std::string cancel(const std::string& job_id) const override {
        const ProgramResult r = runProgram({"qdel", job_id});
        if (r.ok() || r.words().find("does not exist") != std::string::npos) {
            return {};  // a job Grid Engine no longer knows: nothing is left to cancel
        }
        return "qdel " + job_id + " refused (exit " + std::to_string(r.exit_code) +
               "): " + r.words();
    }

    std::string taskName(const std::string& job_id, int index) const override {
        return "Grid Engine task " + job_id + "." + std::to_string(index + 1);
    }

    /// Its accounting is written every flush_time (15 s by default): 30 s of readings.
    int readingsBeforeForgotten() const override { return 15; }
    /// -notify: SIGUSR2 before a kill (qdel, a requeue, h_rt), SIGUSR1 before a suspend.
    std::vector<int> stopSignals() const override { return {SIGUSR2}; }
    std::vector<int> ignoredSignals() const override { return {SIGUSR1}; }
};

}  // namespace

const Scheduler& gridEngineScheduler() {
    static const GridEngineScheduler instance;
    return instance;
}

}  // namespace ampbench::launch
