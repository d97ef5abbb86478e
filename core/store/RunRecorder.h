#pragma once
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/run/TrainObserver.h"
#include "core/store/Database.h"

namespace ampbench::store {

/// How the recorder lives with another program that holds the database's lock.
struct LockPolicy {
    /// While training: how long one write waits for the lock before its rows stay
    /// in memory for a later try (training goes on meanwhile).
    std::chrono::milliseconds try_wait{50};
    /// Longest pause between tries while the lock is held (the pause doubles from
    /// 100 ms up to this).
    std::chrono::milliseconds max_backoff{2000};
    /// A lock held longer than this ends the run as failed: rows must not pile up
    /// in memory for ever.
    std::chrono::milliseconds limit{std::chrono::minutes(10)};
    /// At the end of a run, how long the recorder keeps trying to write the rows it
    /// holds (and the run's status) before it reports exactly what was lost.
    std::chrono::milliseconds final_wait{std::chrono::minutes(2)};
};

/// Persists one run's records as the trainer emits them. Rows are buffered and
/// written in one transaction once the oldest has waited `flush_interval` (default
/// 250 ms) and another row arrives, and at once when the producer says it is idle
/// (onIdle: after a read-back from the device, when a script's pipe goes quiet), so
/// rows reach the file, and another process watching it, whether or not more come;
/// the buffer is always flushed when the run ends, fails or is cancelled. A write that finds the
/// database locked by another program keeps every row in memory and tries again
/// with back-off while training continues; once written, an event records how
/// long the wait was. Each row gets the run's next sequence number at the write; the
/// connection's RecordListener hears the rows and the numerics once committed. Lives
/// on the training thread.
class RunRecorder : public run::TrainObserver {
  public:
    RunRecorder(Database& db, int64_t run_id,
                std::chrono::milliseconds flush_interval = std::chrono::milliseconds(250),
                LockPolicy lock = {});
    ~RunRecorder() override;

    void onStart(const run::RunInfo& info) override;
    void onStep(const run::StepRecord& step) override;
    void onEval(const run::EvalRecord& eval) override;
    void onEvent(const run::EventRecord& event) override;
    void onNumerics(const std::vector<run::NumericsRecord>& rows) override;
    void onFinish(const run::RunOutcome& outcome) override;
    /// Commits what is held now (unless a lock's back-off says to wait); true while
    /// rows are still held.
    bool onIdle() override;

    /// Writes everything held, waiting out a lock for up to `final_wait`; throws
    /// StoreError saying exactly how many rows could not be written and why.
    void flush();
    int64_t runId() const { return run_id_; }
    /// Rows held in memory, not yet in the database.
    size_t pendingRows() const {
        return steps_.size() + evals_.size() + events_.size() + numerics_.size();
    }

  private:
    using Clock = std::chrono::steady_clock;
    /// Commits when the oldest row held has waited the flush interval.
    void maybeFlush();
    /// One write of what is held while training, with the lock's back-off and limit.
    void commitHeld(Clock::time_point now);
    /// One write of everything held; false when the database was busy (rows kept).
    bool tryWrite(std::chrono::milliseconds wait);
    /// Calls `write` until it succeeds, the lock outlasts `patience`, or it fails otherwise.
    template <class Write>
    void untilWritten(Write write, std::chrono::milliseconds patience);
    std::string lostRows(const std::string& reason) const;
    void tellListener(RecordListener& listener, int64_t first_step, int64_t first_eval,
                      int64_t first_event) const;

    Database& db_;
    int64_t run_id_;
    std::chrono::milliseconds interval_;
    LockPolicy lock_;
    std::optional<Clock::time_point> held_since_;    ///< the oldest row not yet written came
    std::optional<Clock::time_point> locked_since_;  ///< first write that found the lock
    Clock::time_point next_try_;
    std::chrono::milliseconds backoff_{0};
    int64_t last_step_ = 0;
    bool finished_ = false;
    bool gave_up_ = false;  ///< the lock outlasted `limit`; rows wait for onFinish
    std::vector<run::StepRecord> steps_;
    std::vector<run::EvalRecord> evals_;
    std::vector<run::EventRecord> events_;
    std::vector<run::NumericsRecord> numerics_;
};

}  // namespace ampbench::store
