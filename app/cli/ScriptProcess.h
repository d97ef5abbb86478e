#pragma once
// The process side of `run --script`: a script started in a process group of its own
// with its record stream on fd 3, the lines it streams read into one planned run, and
// how it ended (exit, signal, silence, Ctrl-C) turned into the run's outcome.
#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cli/ScriptRun.h"
#include "cli/Terminal.h"
#include "core/analysis/Format.h"
#include "core/run/Records.h"
#include "core/run/TrainObserver.h"
#include "core/stream/RecordStream.h"

namespace ampbench::cli {

/// A stream line longer than this is not a record (a runaway write); it is skipped.
inline constexpr size_t kMaxLine = 64u << 20;
/// What the script printed last on stderr, kept for the run's error message.
inline constexpr size_t kKeptStderr = 4096;
/// After Ctrl-C or a silence, how long the script may take to end before SIGKILL.
inline constexpr auto kGrace = std::chrono::seconds(10);
/// After the script exited, how long a descendant may keep its pipes open.
inline constexpr auto kDrain = std::chrono::seconds(2);
/// Problems with the stream named one by one on stderr; the rest are counted.
inline constexpr int kProblemsSaid = 5;

/// "signal 9 (Killed)".
std::string signalName(int sig);
/// The last line with text in `text`.
std::string lastLine(const std::string& text);

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

/// A started script: its process group, the pipe its records come on and its stderr.
struct Child {
    pid_t pid = -1;
    int stream_fd = -1;
    int err_fd = -1;
};

/// Starts `argv` in a process group of its own with the stream pipe on fd 3, its
/// stdout on this process's stderr (stdout carries the table, or `--stream`) and its
/// stderr through a pipe read here. Throws std::runtime_error when it cannot.
Child spawn(const std::vector<std::string>& argv, const std::vector<std::string>& env);

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

/// The outcome from the way the script ended and what it recorded.
run::RunOutcome judgeEnd(const ScriptEnd& end, const ScriptStream& s, double silence_s);

/// Runs one planned run's script to its end, feeding its records to `stream`.
ScriptEnd runChild(const Child& child, ScriptStream& stream, const run::CancelToken& cancel,
                   double silence_s);

}  // namespace ampbench::cli
