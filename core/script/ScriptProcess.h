#pragma once
// The process side of a training script (the CLI's `run --script`, the desktop's
// model `script`): a script started in a process group of its own with its record
// stream on fd 3, the lines it streams read into one planned run, and how it ended
// (exit, signal, silence, cancel) turned into the run's outcome.
#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/run/Records.h"
#include "core/run/TrainObserver.h"
#include "core/script/ProcessTree.h"
#include "core/stream/RecordStream.h"

namespace ampbench::script {

/// The file descriptor the script's record stream arrives on (AMPBENCH_STREAM_FD).
constexpr int kScriptStreamFd = 3;

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
/// While a script keeps streaming, the rows read are committed at least this often;
/// when its pipe has been quiet for one poll (100 ms) they are committed at once, so a
/// row waits less than 250 ms, as the store promises.
inline constexpr auto kCommitEvery = std::chrono::milliseconds(150);

/// "signal 9 (Killed)".
std::string signalName(int sig);
/// The last line with text in `text`.
std::string lastLine(const std::string& text);

/// Reads what the script streams into one planned run through its observers (the
/// run's recorder and the progress display): the C++ reader decodes every line, so
/// the script's stream is held to the same schema as `ingest`'s.
class ScriptStream {
  public:
    /// Each problem with the stream, as a line naming the run ("run 3 (fp32, seed 1):
    /// record stream line 4: ..."); the first kProblemsSaid only, the rest are counted.
    using Say = std::function<void(const std::string&)>;

    ScriptStream(int64_t run_id, run::TrainObserver& sink, std::string who, Say say = {})
        : run_id_(run_id), sink_(sink), who_(std::move(who)), say_(std::move(say)) {}

    /// One line of the stream, without its newline. Throws what the sink throws (the
    /// database refusing the rows).
    void line(const std::string& text);

    bool sawHeader() const { return header_; }
    int64_t steps() const { return steps_; }
    int64_t lastStep() const { return last_step_; }
    int64_t problems() const { return problems_; }
    const std::string& firstProblem() const { return first_problem_; }
    const std::optional<stream::StatusRecord>& status() const { return status_; }
    const std::string& environment() const { return environment_; }

    /// Commits the rows read so far (the sink's onIdle). Throws what the sink throws.
    void commit();
    /// Rows were handed to the sink and not committed yet (or wait for another
    /// program's lock).
    bool holding() const { return holding_; }

    /// Records the status counted that never arrived (a stream cut short).
    void checkComplete();

  private:
    bool ours(int64_t run, const char* what);
    bool sequenced(int64_t seq);
    void problem(const std::string& text);

    int64_t run_id_;
    run::TrainObserver& sink_;
    std::string who_;
    Say say_;
    int64_t line_ = 0;
    bool header_ = false;
    bool refused_ = false;
    bool holding_ = false;
    int64_t last_seq_ = 0;
    int64_t rows_ = 0;
    int64_t steps_ = 0;
    int64_t last_step_ = 0;
    int64_t problems_ = 0;
    std::string first_problem_;
    std::optional<stream::StatusRecord> status_;
    std::string environment_;
};

/// A started script: its process (a group of its own, under a keeper that ends its
/// whole tree with the run: ProcessTree.h), the pipe its records come on and its stderr.
struct Child {
    KeptProcess process;
    int stream_fd = -1;
    int err_fd = -1;
};

/// Starts `argv` under a keeper, in a process group of its own, with the stream pipe
/// on fd 3, its stdout on this process's stderr (the CLI's stdout carries the table,
/// or `--stream`) and its stderr through a pipe read here. Throws std::runtime_error
/// when it cannot. End it with endChild (runChild does).
Child spawn(const std::vector<std::string>& argv, const std::vector<std::string>& env);
/// Ends what is left of the script's process tree and closes its pipes: the script's
/// wait status (death by SIGKILL when it was still running).
int endChild(Child& child);

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

/// Runs one planned run's script to its end, feeding its records to `stream`; what the
/// script writes on stderr is copied to this process's stderr and its tail kept. Every
/// process the script started ends before it returns (endChild).
ScriptEnd runChild(Child& child, ScriptStream& stream, const run::CancelToken& cancel,
                   double silence_s);

}  // namespace ampbench::script
