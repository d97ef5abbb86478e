// `ampbench-cli run --script train.py`: the user's training script trains each run.
#include "cli/ScriptRun.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "cli/ExitCodes.h"
#include "cli/Interrupt.h"
#include "cli/Progress.h"
#include "cli/StreamOutput.h"
#include "cli/Terminal.h"
#include "core/analysis/ComparisonTable.h"
#include "core/analysis/Format.h"
#include "core/analysis/Summary.h"
#include "core/config/PlannedArm.h"
#include "core/data/DataError.h"
#include "core/probe/Environment.h"
#include "core/store/Database.h"
#include "core/store/RunRecorder.h"
#include "core/stream/RecordStream.h"
#include "core/train/Experiment.h"
#include "core/train/Trainer.h"

extern char** environ;

namespace ampbench::cli {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

/// A stream line longer than this is not a record (a runaway write); it is skipped.
constexpr size_t kMaxLine = 64u << 20;
/// What the script printed last on stderr, kept for the run's error message.
constexpr size_t kKeptStderr = 4096;
/// After Ctrl-C or a silence, how long the script may take to end before SIGKILL.
constexpr auto kGrace = std::chrono::seconds(10);
/// After the script exited, how long a descendant may keep its pipes open.
constexpr auto kDrain = std::chrono::seconds(2);
/// Problems with the stream named one by one on stderr; the rest are counted.
constexpr int kProblemsSaid = 5;

std::string signalName(int sig) {
    const char* name = strsignal(sig);
    return "signal " + std::to_string(sig) + (name ? std::string(" (") + name + ")" : "");
}

std::string quoted(const std::vector<std::string>& words) {
    std::string out;
    for (const auto& w : words) {
        const bool plain = !w.empty() && w.find_first_of(" \t\n'\"\\$`") == std::string::npos;
        out += (out.empty() ? "" : " ") + (plain ? w : "'" + w + "'");
    }
    return out;
}

/// The last line with text in `text`.
std::string lastLine(const std::string& text) {
    size_t end = text.find_last_not_of(" \t\r\n");
    if (end == std::string::npos) {
        return {};
    }
    const size_t begin = text.rfind('\n', end);
    return text.substr(begin == std::string::npos ? 0 : begin + 1,
                       end + 1 - (begin == std::string::npos ? 0 : begin + 1));
}

void setCloexec(int fd) {
    fcntl(fd, F_SETFD, fcntl(fd, F_GETFD) | FD_CLOEXEC);
}

/// Reads what the script streams into one planned run through its observers (the
/// run's recorder and the progress display): the C++ reader decodes every line, so
/// the script's stream is held to the same schema as `ingest`'s.
class ScriptStream {
  public:
    ScriptStream(int64_t run_id, run::TrainObserver& sink, std::string who)
        : run_id_(run_id), sink_(sink), who_(std::move(who)) {}

    void line(const std::string& text) {
        ++line_;
        if (refused_ || text.find_first_not_of(" \t\r") == std::string::npos) {
            return;
        }
        stream::Record record;
        try {
            record = stream::decode(text, line_);
        } catch (const stream::StreamError& e) {
            problem(std::string(e.what()) + "; skipped");
            return;
        }
        if (const auto* h = std::get_if<stream::Header>(&record)) {
            if (h->stream_version != stream::kStreamVersion) {
                problem("line " + std::to_string(line_) + ": the stream is version " +
                        std::to_string(h->stream_version) + " and this build reads version " +
                        std::to_string(stream::kStreamVersion) +
                        " only (install the ampbench package of this build); nothing after "
                        "it was read");
                refused_ = true;
                return;
            }
            header_ = true;
            environment_ = h->environment_json;
            return;
        }
        if (!header_) {
            problem("line " + std::to_string(line_) +
                    ": the record stream does not begin with a header; nothing was read");
            refused_ = true;
            return;
        }
        if (auto* r = std::get_if<stream::RowRecord>(&record)) {
            if (!ours(r->run, "a row")) {
                return;
            }
            if (!sequenced(r->row.seq)) {
                return;
            }
            if (const auto* s = std::get_if<run::StepRecord>(&r->row.record)) {
                ++steps_;
                last_step_ = s->step;
                sink_.onStep(*s);
            } else if (const auto* e = std::get_if<run::EvalRecord>(&r->row.record)) {
                sink_.onEval(*e);
            } else {
                sink_.onEvent(std::get<run::EventRecord>(r->row.record));
            }
            ++rows_;
        } else if (auto* g = std::get_if<stream::NumericsGroup>(&record)) {
            if (ours(g->run, "per-layer numerics")) {
                sink_.onNumerics(g->rows);
            }
        } else if (const auto* s = std::get_if<stream::StatusRecord>(&record)) {
            if (ours(s->run, "a status")) {
                status_ = *s;
            }
        } else {
            // The recorder sends neither when the workbench reads it: the run is the
            // one planned here, not a copy of another database's.
            problem("line " + std::to_string(line_) +
                    ": an experiment or run record; a script's rows belong to the run planned "
                    "here, so it was skipped");
        }
    }

    bool sawHeader() const { return header_; }
    int64_t steps() const { return steps_; }
    int64_t lastStep() const { return last_step_; }
    int64_t problems() const { return problems_; }
    const std::string& firstProblem() const { return first_problem_; }
    const std::optional<stream::StatusRecord>& status() const { return status_; }
    const std::string& environment() const { return environment_; }

    /// Records the status counted that never arrived (a stream cut short).
    void checkComplete() {
        if (status_ && status_->last_seq > last_seq_) {
            problem("the script's recorder wrote " + std::to_string(status_->last_seq) +
                    " records, " + std::to_string(last_seq_) + " arrived");
        }
    }

  private:
    bool ours(int64_t run, const char* what) {
        if (run == run_id_) {
            return true;
        }
        problem("line " + std::to_string(line_) + ": " + what + " of run " + std::to_string(run) +
                ", not of this run (" + std::to_string(run_id_) + "); skipped");
        return false;
    }

    bool sequenced(int64_t seq) {
        if (seq <= last_seq_) {
            problem("line " + std::to_string(line_) + ": record " + std::to_string(seq) +
                    " again or out of order (the last was " + std::to_string(last_seq_) +
                    "); skipped");
            return false;
        }
        if (seq - last_seq_ > 1) {
            problem("line " + std::to_string(line_) + ": records " + std::to_string(last_seq_ + 1) +
                    "-" + std::to_string(seq - 1) + " missing; the records after them were kept");
        }
        last_seq_ = seq;
        return true;
    }

    void problem(const std::string& text) {
        if (problems_++ == 0) {
            first_problem_ = text;
        }
        if (problems_ <= kProblemsSaid) {
            say(stderr, "%s: record stream %s\n", who_.c_str(),
                analysis::printable(text, false).c_str());
        }
    }

    int64_t run_id_;
    run::TrainObserver& sink_;
    std::string who_;
    int64_t line_ = 0;
    bool header_ = false;
    bool refused_ = false;
    int64_t last_seq_ = 0;
    int64_t rows_ = 0;
    int64_t steps_ = 0;
    int64_t last_step_ = 0;
    int64_t problems_ = 0;
    std::string first_problem_;
    std::optional<stream::StatusRecord> status_;
    std::string environment_;
};

/// The settings of one planned run for the script, as AMPBENCH_* variables.
std::vector<std::pair<std::string, std::string>> armVariables(const config::ExperimentSpec& spec,
                                                              const train::ExperimentPlan& plan,
                                                              const train::PlannedRun& r,
                                                              const config::PlannedArm& planned,
                                                              const std::string& device) {
    const config::ArmSpec& arm = planned.arm;
    const bool cuda = device.rfind("cuda", 0) == 0;
    const config::Precision precision =
        planned.precision ? *planned.precision : config::resolvePrecision(arm.precision, cuda);
    auto number = [](double v) {
        char buf[40];
        std::snprintf(buf, sizeof buf, "%.17g", v);
        return std::string(buf);
    };
    nlohmann::json scaler = {{"init_scale", arm.scaler.init_scale},
                             {"growth_factor", arm.scaler.growth_factor},
                             {"backoff_factor", arm.scaler.backoff_factor},
                             {"growth_interval", arm.scaler.growth_interval}};
    return {
        {"AMPBENCH_STREAM_FD", std::to_string(kScriptStreamFd)},
        {"AMPBENCH_RUN_ID", std::to_string(r.run_id)},
        {"AMPBENCH_EXPERIMENT_ID", std::to_string(plan.experiment_id)},
        {"AMPBENCH_EXPERIMENT", spec.name},
        {"AMPBENCH_ARM", r.arm},
        {"AMPBENCH_ARM_INDEX", std::to_string(r.arm_index)},
        {"AMPBENCH_SEED", std::to_string(r.seed)},
        {"AMPBENCH_PRECISION", config::toString(precision)},
        {"AMPBENCH_ACCUMULATION", std::to_string(arm.accumulation)},
        {"AMPBENCH_LR",
         number(std::isnan(planned.lr) ? config::scaledLearningRate(spec, arm) : planned.lr)},
        {"AMPBENCH_BASE_LR", number(spec.optimizer.lr)},
        {"AMPBENCH_LR_RULE", config::toString(arm.lr_rule)},
        {"AMPBENCH_MICRO_BATCH", std::to_string(spec.micro_batch)},
        {"AMPBENCH_EFFECTIVE_BATCH", std::to_string(planned.effective_batch)},
        {"AMPBENCH_PLANNED_STEPS", std::to_string(r.planned_steps)},
        {"AMPBENCH_MICRO_STEPS", std::to_string(spec.micro_steps)},
        {"AMPBENCH_WARMUP_STEPS", std::to_string(spec.warmup_steps)},
        {"AMPBENCH_EVAL_INTERVAL", std::to_string(spec.eval_interval)},
        {"AMPBENCH_DEVICE", device},
        {"AMPBENCH_DATA", spec.data.path},
        {"AMPBENCH_DATA_DIR", spec.data.dir},
        {"AMPBENCH_GRAD_CLIP", number(arm.grad_clip)},
        {"AMPBENCH_LOSS_SCALING", arm.loss_scaling ? "1" : "0"},
        {"AMPBENCH_SCALER", scaler.dump()},
        {"AMPBENCH_ARM_JSON", config::plannedArmToJson(planned)},
    };
}

std::string precisionOf(const std::vector<std::pair<std::string, std::string>>& vars) {
    for (const auto& [k, v] : vars) {
        if (k == "AMPBENCH_PRECISION") {
            return v;
        }
    }
    return {};
}

/// The child's environment: this process's, less any AMPBENCH_* of its own (a stream
/// path set by hand must not take the run's records elsewhere), plus `vars`, the
/// package's folder first on PYTHONPATH and unbuffered output.
std::vector<std::string> childEnvironment(
    const std::vector<std::pair<std::string, std::string>>& vars, const std::string& package) {
    std::vector<std::string> out;
    std::string pythonpath;
    for (char** e = environ; e && *e; ++e) {
        const std::string entry = *e;
        if (entry.rfind("AMPBENCH_", 0) == 0 || entry.rfind("PYTHONUNBUFFERED=", 0) == 0) {
            continue;
        }
        if (entry.rfind("PYTHONPATH=", 0) == 0) {
            pythonpath = entry.substr(11);
            continue;
        }
        out.push_back(entry);
    }
    for (const auto& [k, v] : vars) {
        out.push_back(k + "=" + v);
    }
    if (!package.empty()) {
        pythonpath = pythonpath.empty() ? package : package + ":" + pythonpath;
    }
    if (!pythonpath.empty()) {
        out.push_back("PYTHONPATH=" + pythonpath);
    }
    out.push_back("PYTHONUNBUFFERED=1");
    return out;
}

/// A started script: its process group, the pipe its records come on and its stderr.
struct Child {
    pid_t pid = -1;
    int stream_fd = -1;
    int err_fd = -1;
};

/// Starts `argv` in a process group of its own with the stream pipe on fd 3, its
/// stdout on this process's stderr (stdout carries the table, or `--stream`) and its
/// stderr through a pipe read here. Throws std::runtime_error when it cannot.
Child spawn(const std::vector<std::string>& argv, const std::vector<std::string>& env) {
    int records[2];
    int err[2];
    if (pipe(records) != 0) {
        throw std::runtime_error(std::string("cannot make a pipe: ") + std::strerror(errno));
    }
    if (pipe(err) != 0) {
        const int e = errno;
        close(records[0]);
        close(records[1]);
        throw std::runtime_error(std::string("cannot make a pipe: ") + std::strerror(e));
    }
    std::vector<char*> args;
    for (const auto& a : argv) {
        args.push_back(const_cast<char*>(a.c_str()));
    }
    args.push_back(nullptr);
    std::vector<char*> envp;
    for (const auto& e : env) {
        envp.push_back(const_cast<char*>(e.c_str()));
    }
    envp.push_back(nullptr);
    const pid_t parent = getpid();
    const pid_t pid = fork();
    if (pid < 0) {
        const int e = errno;
        for (int fd : {records[0], records[1], err[0], err[1]}) {
            close(fd);
        }
        throw std::runtime_error(std::string("cannot start the script: ") + std::strerror(e));
    }
    if (pid == 0) {
        // Only async-signal-safe calls from here to exec.
        setpgid(0, 0);
        // Ends with this process, whatever ends it (kill -9 included).
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (getppid() != parent) {
            _exit(127);
        }
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, nullptr);
        for (int sig : {SIGINT, SIGTERM, SIGPIPE, SIGXFSZ, SIGHUP, SIGQUIT}) {
            signal(sig, SIG_DFL);
        }
        const int null_in = open("/dev/null", O_RDONLY);
        if (null_in >= 0) {
            dup2(null_in, STDIN_FILENO);
        }
        dup2(STDERR_FILENO, STDOUT_FILENO);
        dup2(err[1], STDERR_FILENO);
        dup2(records[1], kScriptStreamFd);
        // Nothing else of this process's (the database's descriptors) reaches the script.
        if (syscall(SYS_close_range, kScriptStreamFd + 1, ~0U, 0) != 0) {
            for (int fd = kScriptStreamFd + 1; fd < 4096; ++fd) {
                close(fd);
            }
        }
        execvpe(args[0], args.data(), envp.data());
        const char* why = std::strerror(errno);
        const char* text = "cannot start ";
        (void)!write(STDERR_FILENO, text, std::strlen(text));
        (void)!write(STDERR_FILENO, args[0], std::strlen(args[0]));
        (void)!write(STDERR_FILENO, ": ", 2);
        (void)!write(STDERR_FILENO, why, std::strlen(why));
        (void)!write(STDERR_FILENO, "\n", 1);
        _exit(127);
    }
    setpgid(pid, pid);  // also here, so a signal sent at once finds the group
    close(records[1]);
    close(err[1]);
    setCloexec(records[0]);
    setCloexec(err[0]);
    fcntl(records[0], F_SETFL, fcntl(records[0], F_GETFL) | O_NONBLOCK);
    fcntl(err[0], F_SETFL, fcntl(err[0], F_GETFL) | O_NONBLOCK);
    return {pid, records[0], err[0]};
}

/// How one script run ended, before it is told to the recorder.
struct ScriptEnd {
    bool exited = false;
    int code = 0;
    int signal = 0;
    bool cancelled = false;
    bool silent = false;          ///< stopped here: it sent nothing for the silence limit
    std::string recording_error;  ///< the database could not take its rows
    std::string stderr_tail;
};

std::string stepsText(int64_t step) {
    return step == 0 ? "before its first step" : "after step " + std::to_string(step);
}

/// The outcome from the way the script ended and what it recorded.
run::RunOutcome judgeEnd(const ScriptEnd& end, const ScriptStream& s, double silence_s) {
    run::RunOutcome out;
    out.steps_done = s.steps();
    const std::string after = stepsText(s.lastStep());
    std::string detail;
    if (s.status() && !s.status()->error.empty()) {
        detail = s.status()->error;
    } else {
        detail = lastLine(end.stderr_tail);
    }
    const std::string stream_note =
        s.problems() == 0
            ? std::string()
            : "; its record stream had " + std::to_string(s.problems()) + " problem" +
                  (s.problems() == 1 ? "" : "s") + " (first: " + s.firstProblem() + ")";
    auto set = [&](run::RunStatus status, run::FailureKind kind, std::string error) {
        out.status = status;
        out.failure = kind;
        out.error = std::move(error);
    };
    if (!end.recording_error.empty()) {
        set(run::RunStatus::Failed, run::FailureKind::Recording,
            "the script's records could not be stored " + after + " (" + end.recording_error +
                "); the script was stopped");
    } else if (end.cancelled) {
        set(run::RunStatus::Cancelled, run::FailureKind::Cancelled,
            "cancelled " + after + ": the script was stopped");
    } else if (end.silent) {
        char limit[32];
        std::snprintf(limit, sizeof limit, "%g", silence_s);
        set(run::RunStatus::Failed, run::FailureKind::Runtime,
            "the script sent no record for " + std::string(limit) +
                " s (--script-silence) and was stopped " + after + stream_note);
    } else if (!end.exited) {
        set(run::RunStatus::Interrupted, run::FailureKind::Interrupted,
            "the script was killed by " + signalName(end.signal) + " " + after + stream_note);
    } else if (end.code != 0) {
        run::FailureKind kind = run::FailureKind::Runtime;
        if (s.status() && s.status()->failure != run::FailureKind::None &&
            s.status()->failure != run::FailureKind::Cancelled) {
            kind = s.status()->failure;  // out of memory, as the script's recorder saw it
        }
        set(run::RunStatus::Failed, kind,
            "the script exited with status " + std::to_string(end.code) + " " + after +
                (detail.empty() ? std::string() : ": " + detail) + stream_note);
    } else if (!s.sawHeader()) {
        set(run::RunStatus::Failed, run::FailureKind::Runtime,
            "the script exited without recording anything: it never created "
            "ampbench.Recorder() (nothing came on AMPBENCH_STREAM_FD)" +
                stream_note);
    } else if (s.steps() == 0) {
        set(run::RunStatus::Failed, run::FailureKind::Runtime,
            "the script recorded no training step (call rec.step(loss, ...) after each "
            "optimizer step)" +
                stream_note);
    } else if (s.problems() > 0) {
        set(run::RunStatus::Failed, run::FailureKind::Recording,
            "the script's record stream had " + std::to_string(s.problems()) + " problem" +
                (s.problems() == 1 ? "" : "s") + " (first: " + s.firstProblem() +
                "); the records read are kept");
    } else if (s.status() && s.status()->status != run::RunStatus::Finished &&
               s.status()->status != run::RunStatus::Running) {
        // The script caught its own failure and closed the recorder with it.
        set(s.status()->status, s.status()->failure,
            s.status()->error.empty()
                ? "the script's recorder ended the run " + run::toString(s.status()->status)
                : s.status()->error);
    }
    return out;
}

/// Runs one planned run's script to its end, feeding its records to `sink`.
ScriptEnd runChild(const Child& child, ScriptStream& stream, const run::CancelToken& cancel,
                   double silence_s) {
    ScriptEnd end;
    std::string partial;
    bool skipping = false;  // inside an over-long line
    bool stream_open = true, err_open = true, reaped = false;
    auto last_record = Clock::now();
    std::optional<Clock::time_point> kill_at;
    std::optional<Clock::time_point> exited_at;
    int status = 0;
    auto stop = [&](int sig) {
        if (!kill_at) {
            kill(-child.pid, sig);
            kill_at = Clock::now() + kGrace;
        }
    };
    char buf[65536];
    while (true) {
        if (!reaped) {
            const pid_t w = waitpid(child.pid, &status, WNOHANG);
            if (w == child.pid) {
                reaped = true;
                exited_at = Clock::now();
            }
        }
        if (reaped && ((!stream_open && !err_open) || Clock::now() - *exited_at > kDrain)) {
            break;
        }
        if (!reaped) {
            if (cancel.cancelled() && !end.cancelled) {
                end.cancelled = true;
                stop(SIGINT);  // as Ctrl-C would: the script's recorder closes the run
            }
            if (silence_s > 0 && !kill_at &&
                std::chrono::duration<double>(Clock::now() - last_record).count() > silence_s) {
                end.silent = true;
                stop(SIGTERM);
            }
            if (kill_at && Clock::now() > *kill_at) {
                kill(-child.pid, SIGKILL);
            }
        }
        pollfd fds[2];
        nfds_t n = 0;
        int stream_index = -1, err_index = -1;
        if (stream_open) {
            stream_index = static_cast<int>(n);
            fds[n++] = {child.stream_fd, POLLIN, 0};
        }
        if (err_open) {
            err_index = static_cast<int>(n);
            fds[n++] = {child.err_fd, POLLIN, 0};
        }
        if (n == 0) {
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
            continue;
        }
        const int ready = poll(fds, n, 100);
        if (ready < 0 && errno != EINTR) {
            break;
        }
        if (ready <= 0) {
            continue;
        }
        if (stream_index >= 0 && fds[stream_index].revents) {
            const ssize_t got = read(child.stream_fd, buf, sizeof buf);
            if (got > 0) {
                last_record = Clock::now();
                size_t start = 0;
                for (size_t i = 0; i < static_cast<size_t>(got); ++i) {
                    if (buf[i] != '\n') {
                        continue;
                    }
                    if (!skipping) {
                        partial.append(buf + start, i - start);
                        if (end.recording_error.empty()) {
                            try {
                                stream.line(partial);
                            } catch (const std::exception& e) {
                                end.recording_error = e.what();
                                stop(SIGTERM);
                            }
                        }
                    }
                    partial.clear();
                    skipping = false;
                    start = i + 1;
                }
                if (!skipping) {
                    partial.append(buf + start, static_cast<size_t>(got) - start);
                    if (partial.size() > kMaxLine) {
                        stream.line("(a line longer than 64 MiB)");
                        partial.clear();
                        skipping = true;
                    }
                }
            } else if (got == 0 || (errno != EAGAIN && errno != EINTR)) {
                stream_open = false;
                if (!partial.empty() && !skipping && end.recording_error.empty()) {
                    try {
                        stream.line(partial);  // a last line without its newline
                    } catch (const std::exception& e) {
                        end.recording_error = e.what();
                    }
                }
            }
        }
        if (err_index >= 0 && fds[err_index].revents) {
            const ssize_t got = read(child.err_fd, buf, sizeof buf);
            if (got > 0) {
                (void)!write(STDERR_FILENO, buf, static_cast<size_t>(got));
                end.stderr_tail.append(buf, static_cast<size_t>(got));
                if (end.stderr_tail.size() > kKeptStderr) {
                    end.stderr_tail.erase(0, end.stderr_tail.size() - kKeptStderr);
                }
            } else if (got == 0 || (errno != EAGAIN && errno != EINTR)) {
                err_open = false;
            }
        }
    }
    if (!reaped) {
        kill(-child.pid, SIGKILL);
        waitpid(child.pid, &status, 0);
    }
    kill(-child.pid, SIGKILL);  // what the script left behind in its group
    close(child.stream_fd);
    close(child.err_fd);
    end.exited = WIFEXITED(status);
    end.code = end.exited ? WEXITSTATUS(status) : 0;
    end.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    return end;
}

/// The interpreter for the script: --python, else $AMPBENCH_PYTHON, else python3.
std::string interpreter(const RunOverrides& o) {
    if (!o.python.empty()) {
        return o.python;
    }
    const char* env = std::getenv("AMPBENCH_PYTHON");
    return env && *env ? env : "python3";
}

/// Whether `python` runs and imports the ampbench package: nothing is planned when
/// a run could not even start. Prints why not.
bool checkInterpreter(const std::string& python, const std::string& package) {
    const std::vector<std::string> argv{python, "-c", "import ampbench"};
    Child child;
    try {
        child = spawn(argv, childEnvironment({}, package));
    } catch (const std::exception& e) {
        say(stderr, "%s\n", e.what());
        return false;
    }
    int status = 0;
    std::string err;
    char buf[4096];
    for (;;) {
        const ssize_t got = read(child.err_fd, buf, sizeof buf);
        if (got > 0) {
            err.append(buf, static_cast<size_t>(got));
            continue;
        }
        if (got < 0 && (errno == EAGAIN || errno == EINTR)) {
            pollfd p{child.err_fd, POLLIN, 0};
            poll(&p, 1, 200);
            continue;
        }
        break;
    }
    waitpid(child.pid, &status, 0);
    close(child.stream_fd);
    close(child.err_fd);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        return true;
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127 && err.find("cannot start") == 0) {
        say(stderr,
            "--python %s: %s (name the interpreter with --python or AMPBENCH_PYTHON; nothing was "
            "run)\n",
            python.c_str(), lastLine(err).c_str());
    } else {
        say(stderr,
            "%s cannot import the ampbench package (%s); it is installed with the workbench "
            "(/usr/lib/python3/dist-packages) or found in a checkout's python/ folder; nothing "
            "was run\n",
            python.c_str(), lastLine(err).c_str());
    }
    return false;
}

std::string selfExe() {
    std::error_code ec;
    const fs::path p = fs::read_symlink("/proc/self/exe", ec);
    return ec ? std::string() : p.string();
}

/// The table and each arm's verdict, as `run` prints them.
void printResult(store::Database& db, const config::ExperimentSpec& spec,
                 const train::ExperimentPlan& plan, const std::string& device,
                 const std::string& db_path, double total_s) {
    auto runs = analysis::summarizeExperimentRuns(db, plan.experiment_id);
    auto arms = analysis::summarizeArms(runs);
    const bool cuda = device.rfind("cuda", 0) == 0;
    auto table = analysis::comparisonTable(arms, cuda ? "peak alloc" : "peak RSS");
    say(stdout, "\n%s\n", analysis::printable(spec.name, false).c_str());
    say(stdout, "%s", table.render().c_str());
    const char* base = arms.empty() ? "baseline" : arms.front().arm.c_str();
    say(stdout,
        "speed-up = %s's time per sample \xC3\xB7 the arm's (each run's median over its timed "
        "steps, as the script recorded them); memory = peak \xC3\xB7 %s's (%s).\n",
        base, base,
        cuda ? "CUDA caching allocator, peak allocated"
             : "CPU: peak resident set of the script's process");
    printVerdicts(db, plan.experiment_id);
    say(stdout, "experiment %lld in %s; total time %.1f s\n",
        static_cast<long long>(plan.experiment_id), db_path.c_str(), total_s);
}

}  // namespace

std::string pythonPackageDir() {
    const std::string exe = selfExe();
    if (exe.empty()) {
        return {};
    }
    std::error_code ec;
    const fs::path bin = fs::path(exe).parent_path();
    // An installed binary: <prefix>/bin next to <prefix>/lib/python3/dist-packages.
    const fs::path installed = bin.parent_path() / "lib" / "python3" / "dist-packages";
    if (fs::exists(installed / "ampbench" / "__init__.py", ec)) {
        return installed.string();
    }
    // A build tree inside a checkout: python/ in a folder above the binary.
    for (fs::path dir = bin; !dir.empty(); dir = dir.parent_path()) {
        if (fs::exists(dir / "python" / "ampbench" / "__init__.py", ec)) {
            return (dir / "python").string();
        }
        if (dir == dir.parent_path()) {
            break;
        }
    }
    return {};
}

int runScript(const std::string& db_path, const config::ValidSpec& given, const RunOverrides& o,
              std::FILE* stream) {
    const auto t0 = Clock::now();
    for (size_t i = 0; i < given.spec().arms.size(); ++i) {
        const config::ArmSpec& arm = given.spec().arms[i];
        if (arm.ranks > 1) {
            say(stderr,
                "arm '%s' (row %zu): ranks = %d: a script trains in one process; data-parallel "
                "arms are for the built-in models (nothing was run)\n",
                analysis::printable(arm.name, false).c_str(), i + 1, arm.ranks);
            return kUsage;
        }
    }
    // --script, or a spec whose model is the script (a --config file, a rerun).
    const std::string script_path = o.script.empty() ? given.spec().model.file : o.script;
    std::error_code ec;
    const fs::path script = fs::absolute(script_path, ec);
    // The stored spec says that the script trained, and which (its arguments are in
    // each run's first event). Named for the script unless a name, a spec file or a
    // stored spec names it.
    config::ExperimentSpec named = given.spec();
    named.model.name = "script";
    named.model.file = script.string();
    if (o.name.empty() && o.config_file.empty() && !o.base) {
        named.name = fs::path(script_path).filename().string();
    }
    std::vector<config::FieldError> errors;
    std::optional<config::ValidSpec> renamed = config::ValidSpec::check(named, errors);
    const config::ValidSpec& valid = renamed ? *renamed : given;
    const config::ExperimentSpec& spec = valid.spec();
    struct stat st {};
    const char* script_problem = nullptr;
    if (::stat(script_path.c_str(), &st) != 0) {
        script_problem = errno == ENOENT ? "no such file" : std::strerror(errno);
    } else if (S_ISDIR(st.st_mode)) {
        script_problem = "is a folder, not a script";
    } else if (!S_ISREG(st.st_mode)) {
        script_problem = "is not a regular file";
    } else if (access(script_path.c_str(), R_OK) != 0) {
        script_problem = "cannot be read (permission denied)";
    }
    if (script_problem) {
        say(stderr, "--script %s: %s (nothing was run)\n",
            analysis::printable(script_path, false).c_str(), script_problem);
        return kDataMissing;
    }
    if (!(o.script_silence_s >= 0) || !std::isfinite(o.script_silence_s)) {
        say(stderr, "--script-silence %g: seconds from 0 (never) up\n", o.script_silence_s);
        return kUsage;
    }
    const std::string python = interpreter(o);
    const std::string package = pythonPackageDir();
    if (!checkInterpreter(python, package)) {
        return kDataMissing;
    }
    std::string device;
    try {
        device = train::resolveDevice(spec.device);
    } catch (const std::exception& e) {
        say(stderr, "device: %s (nothing was run)\n", e.what());
        return kUsage;
    }
    std::unique_ptr<store::Database> db;
    try {
        db = store::Database::open(db_path);
    } catch (const store::StoreError& e) {
        say(stderr, "%s\n", e.what());
        return kStoreError;
    }
    StreamTap tap(*db, stream);
    RunStreamer* const streamer = tap.streamer();
    train::ExperimentPlan plan;
    try {
        plan = train::planExperiment(*db, valid);
    } catch (const store::StoreError& e) {
        say(stderr, "%s\n", e.what());
        return kStoreError;
    } catch (const train::SpecError& e) {
        say(stderr, "%s\n", e.what());
        return kUsage;
    } catch (const data::DataError& e) {
        say(stderr, "%s\n", e.what());
        return kDataMissing;
    }
    const std::string env_json = probe::toJson(probe::probeEnvironment(device));
    if (streamer) {
        streamer->planned(env_json, plan.experiment_id);
    }
    std::vector<std::string> argv{python, script.string()};
    argv.insert(argv.end(), o.script_args.begin(), o.script_args.end());
    if (!o.quiet) {
        say(stderr, "experiment %lld '%s': %zu runs of %s on %s, recording to %s\n",
            static_cast<long long>(plan.experiment_id),
            analysis::printable(spec.name, false).c_str(), plan.runs.size(),
            analysis::printable(quoted(argv), false).c_str(), device.c_str(), db_path.c_str());
    }
    run::CancelToken cancel;
    auto interrupt = std::make_unique<InterruptScope>(cancel);
    Progress progress(static_cast<int>(plan.runs.size()), isatty(STDERR_FILENO) != 0, o.quiet);
    bool failed = false;
    int index = 0;
    for (const auto& r : plan.runs) {
        if (cancel.cancelled()) {
            break;
        }
        const auto row = db->run(r.run_id);
        const config::PlannedArm planned =
            config::plannedArmFromJson(row ? row->spec_json : std::string());
        store::RunRecorder recorder(*db, r.run_id);
        train::ObserverFanout sink({&recorder, &progress});
        progress.beginRun(index++, r.arm, r.seed, r.planned_steps);
        const auto vars = armVariables(spec, plan, r, planned, device);
        run::RunInfo info;
        info.arm = r.arm;
        info.precision = precisionOf(vars);
        info.device = device;
        info.seed = r.seed;
        info.planned_steps = r.planned_steps;
        info.micro_batch = spec.micro_batch;
        info.accumulation = planned.arm.accumulation;
        info.lr = planned.lr;
        info.env_json = env_json;
        const std::string who = "run " + std::to_string(r.run_id) + " (" + r.arm + ", seed " +
                                std::to_string(r.seed) + ")";
        run::RunOutcome outcome;
        const auto started = Clock::now();
        try {
            sink.onStart(info);
            sink.onEvent({0, run::EventKind::Info,
                          "trained by the script " + quoted(argv) +
                              " (AMPBENCH_PRECISION=" + info.precision +
                              "; the workbench records what the script reports and does not "
                              "change its dtypes)",
                          0.0});
            ScriptStream reader(r.run_id, sink, who);
            ScriptEnd end;
            try {
                const Child child = spawn(argv, childEnvironment(vars, package));
                end = runChild(child, reader, cancel, o.script_silence_s);
            } catch (const std::runtime_error& e) {
                end.exited = true;
                end.code = 127;
                end.stderr_tail = e.what();
            }
            if (end.recording_error.empty()) {
                reader.checkComplete();
            }
            outcome = judgeEnd(end, reader, o.script_silence_s);
            outcome.wall_s = std::chrono::duration<double>(Clock::now() - started).count();
            sink.onFinish(outcome);
        } catch (const std::exception& e) {
            outcome.status = run::RunStatus::Failed;
            outcome.record_error = e.what();
            say(stderr, "%s: %s\n", who.c_str(), e.what());
        }
        failed = failed || outcome.status != run::RunStatus::Finished;
        if (outcome.status == run::RunStatus::Cancelled) {
            break;
        }
    }
    interrupt.reset();
    if (cancel.cancelled()) {
        train::cancelQueued(*db, plan);
    }
    if (streamer) {
        streamer->closeExperiment(plan.experiment_id);
        db->setRecordListener(nullptr);
    }
    printResult(*db, spec, plan, device, db_path,
                std::chrono::duration<double>(Clock::now() - t0).count());
    if (cancel.cancelled()) {
        say(stderr, "cancelled: the rows recorded so far are kept\n");
        return kCancelled;
    }
    return failed ? kRunsFailed : kOk;
}

}  // namespace ampbench::cli
