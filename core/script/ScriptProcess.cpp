// The process side of a training script (ScriptProcess.h).
#include "core/script/ScriptProcess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <thread>

#include "core/analysis/Format.h"

namespace ampbench::script {
using Clock = std::chrono::steady_clock;

std::string signalName(int sig) {
    const char* name = strsignal(sig);
    return "signal " + std::to_string(sig) + (name ? std::string(" (") + name + ")" : "");
}

std::string lastLine(const std::string& text) {
    size_t end = text.find_last_not_of(" \t\r\n");
    if (end == std::string::npos) {
        return {};
    }
    const size_t begin = text.rfind('\n', end);
    return text.substr(begin == std::string::npos ? 0 : begin + 1,
                       end + 1 - (begin == std::string::npos ? 0 : begin + 1));
}

namespace {

std::string stepsText(int64_t step) {
    return step == 0 ? "before its first step" : "after step " + std::to_string(step);
}

}  // namespace

void ScriptStream::line(const std::string& text) {
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
        holding_ = true;
        ++rows_;
    } else if (auto* g = std::get_if<stream::NumericsGroup>(&record)) {
        if (ours(g->run, "per-layer numerics")) {
            sink_.onNumerics(g->rows);
            holding_ = true;
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

void ScriptStream::commit() {
    holding_ = sink_.onIdle();
}

void ScriptStream::checkComplete() {
    if (status_ && status_->last_seq > last_seq_) {
        problem("the script's recorder wrote " + std::to_string(status_->last_seq) + " records, " +
                std::to_string(last_seq_) + " arrived");
    }
}

bool ScriptStream::ours(int64_t run, const char* what) {
    if (run == run_id_) {
        return true;
    }
    problem("line " + std::to_string(line_) + ": " + what + " of run " + std::to_string(run) +
            ", not of this run (" + std::to_string(run_id_) + "); skipped");
    return false;
}

bool ScriptStream::sequenced(int64_t seq) {
    if (seq <= last_seq_) {
        problem("line " + std::to_string(line_) + ": record " + std::to_string(seq) +
                " again or out of order (the last was " + std::to_string(last_seq_) + "); skipped");
        return false;
    }
    if (seq - last_seq_ > 1) {
        problem("line " + std::to_string(line_) + ": records " + std::to_string(last_seq_ + 1) +
                "-" + std::to_string(seq - 1) + " missing; the records after them were kept");
    }
    last_seq_ = seq;
    return true;
}

void ScriptStream::problem(const std::string& text) {
    if (problems_++ == 0) {
        first_problem_ = text;
    }
    if (problems_ <= kProblemsSaid && say_) {
        say_(who_ + ": record stream " + analysis::printable(text, false));
    }
}

Child spawn(const std::vector<std::string>& argv, const std::vector<std::string>& env) {
    // Every descriptor made here is close-on-exec from the start: another thread's
    // child (a packed run's script) never inherits this one's pipes.
    int records[2];
    int err[2];
    if (pipe2(records, O_CLOEXEC) != 0) {
        throw std::runtime_error(std::string("cannot make a pipe: ") + std::strerror(errno));
    }
    if (pipe2(err, O_CLOEXEC) != 0) {
        const int e = errno;
        close(records[0]);
        close(records[1]);
        throw std::runtime_error(std::string("cannot make a pipe: ") + std::strerror(e));
    }
    const int null_in = open("/dev/null", O_RDONLY | O_CLOEXEC);
    Child child;
    try {
        // stdin /dev/null, stdout this process's stderr, stderr and the records through pipes.
        child.process = startKept({argv, env, {null_in, STDERR_FILENO, err[1], records[1]}});
    } catch (...) {
        for (int fd : {records[0], records[1], err[0], err[1], null_in}) {
            close(fd);
        }
        throw;
    }
    for (int fd : {records[1], err[1], null_in}) {
        close(fd);
    }
    fcntl(records[0], F_SETFL, fcntl(records[0], F_GETFL) | O_NONBLOCK);
    fcntl(err[0], F_SETFL, fcntl(err[0], F_GETFL) | O_NONBLOCK);
    child.stream_fd = records[0];
    child.err_fd = err[0];
    return child;
}

int endChild(Child& child) {
    const int status = endTree(child.process);
    for (int* fd : {&child.stream_fd, &child.err_fd}) {
        if (*fd >= 0) {
            close(*fd);
            *fd = -1;
        }
    }
    return status;
}

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

ScriptEnd runChild(Child& child, ScriptStream& stream, const run::CancelToken& cancel,
                   double silence_s) {
    ScriptEnd end;
    std::string partial;
    bool skipping = false;  // inside an over-long line
    bool stream_open = true, err_open = true, reaped = false;
    auto last_record = Clock::now();
    auto last_commit = Clock::now();
    std::optional<Clock::time_point> kill_at;
    std::optional<Clock::time_point> exited_at;
    int status = 0;
    const pid_t group = child.process.pid;
    auto stop = [&](int sig) {
        if (!kill_at) {
            kill(-group, sig);
            kill_at = Clock::now() + kGrace;
        }
    };
    // The rows read are committed when the pipe goes quiet, and at least every
    // kCommitEvery while it streams: a pause in the script never keeps them in memory.
    auto commit = [&](bool quiet) {
        if (!stream.holding() || !end.recording_error.empty() ||
            (!quiet && Clock::now() - last_commit < kCommitEvery)) {
            return;
        }
        last_commit = Clock::now();
        try {
            stream.commit();
        } catch (const std::exception& e) {
            end.recording_error = e.what();
            stop(SIGTERM);
        }
    };
    char buf[65536];
    while (true) {
        if (!reaped) {
            if (const std::optional<int> ended = exitStatus(child.process)) {
                status = *ended;
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
                kill(-group, SIGKILL);
            }
        }
        pollfd fds[3];
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
        if (!reaped && child.process.status_fd >= 0) {
            fds[n++] = {child.process.status_fd, POLLIN, 0};  // wakes when the script ends
        }
        if (n == 0) {
            commit(true);
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
            continue;
        }
        const int ready = poll(fds, n, 100);
        if (ready < 0 && errno != EINTR) {
            break;
        }
        commit(ready == 0);
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
    // What the script left behind ends with it, wherever it went (ProcessTree.h).
    const int last = endChild(child);
    if (!reaped) {
        status = last;
    }
    end.exited = WIFEXITED(status);
    end.code = end.exited ? WEXITSTATUS(status) : 0;
    end.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    return end;
}

}  // namespace ampbench::script
