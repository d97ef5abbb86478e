#pragma once
// Writing a record stream on stdout: `run --stream` and `tail --stream`.
#include <cstdio>
#include <optional>
#include <set>
#include <string>

#include "core/store/Database.h"
#include "core/stream/RecordStream.h"

namespace ampbench::cli {

/// Writes records, a line each, to a FILE*. When the reader has gone (a closed pipe,
/// a dropped SSH connection) it says so once on stderr and writes nothing more; the
/// caller goes on (a run keeps training: the database holds every row).
class StreamOutput {
  public:
    explicit StreamOutput(std::FILE* out) : out_(out) {}
    void write(const stream::Record& record);
    /// Hands what was written to the reader (once per batch of rows).
    void flush();
    bool broken() const { return broken_; }
    /// Said after the note that the reader has gone: how to pick the stream up.
    void setAdvice(std::string advice) { advice_ = std::move(advice); }

  private:
    void lost(int error);
    std::FILE* out_;
    bool broken_ = false;
    std::string advice_;
};

/// Moves the process's stdout to a private descriptor for the stream and points
/// stdout (fd 1) at stderr, so every human line goes to stderr. Also makes a closed
/// pipe an error to handle (EPIPE) rather than a signal that ends the process.
/// Returns the stream's FILE*; nullptr (with a message) when it cannot.
std::FILE* takeStdoutForStream();

/// `run --stream`: the records of an experiment as they are committed. It listens to
/// the connection the runs are recorded through, so the seq on the wire is the seq
/// stored.
class RunStreamer : public store::RecordListener {
  public:
    RunStreamer(store::Database& db, StreamOutput& out) : db_(db), out_(out) {}
    /// The header, the experiment and its queued runs.
    void planned(const std::string& environment_json, int64_t experiment_id);
    void runStarted(int64_t run_id) override;
    /// A numerics record per step.
    void numericsCommitted(int64_t run_id, const std::vector<run::NumericsRecord>& rows) override;
    void rowsCommitted(int64_t run_id, const std::vector<store::SequencedRecord>& rows) override;
    void runFinished(int64_t run_id) override;
    /// The status of every run of the experiment not reported ended yet (runs
    /// cancelled before they started).
    void closeExperiment(int64_t experiment_id);

  private:
    store::Database& db_;
    StreamOutput& out_;
    std::set<int64_t> ended_;
};

/// `--stream` on the connection runs are recorded through: while it lives, the
/// streamer hears every row committed on `db` and writes it to `file`. Without a
/// file (no --stream) there is neither.
class StreamTap {
  public:
    StreamTap(store::Database& db, std::FILE* file) : db_(db) {
        if (file) {
            out_.emplace(file);
            streamer_.emplace(db, *out_);
            db.setRecordListener(&*streamer_);
        }
    }
    ~StreamTap() { db_.setRecordListener(nullptr); }
    StreamTap(const StreamTap&) = delete;
    StreamTap& operator=(const StreamTap&) = delete;
    RunStreamer* streamer() { return streamer_ ? &*streamer_ : nullptr; }
    StreamOutput* output() { return out_ ? &*out_ : nullptr; }

  private:
    store::Database& db_;
    std::optional<StreamOutput> out_;
    std::optional<RunStreamer> streamer_;
};

}  // namespace ampbench::cli
