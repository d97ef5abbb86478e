#pragma once
// A run's record rows: steps, evaluations and events (tables `steps`, `evals` and
// `events`), each with the run-scoped sequence number it was committed under (schema 6).
// Their fields come from run/RecordFields.h.
#include <cstdint>
#include <string>
#include <vector>

#include "core/run/Records.h"
#include "core/store/Database.h"
#include "core/store/Rows.h"

namespace ampbench::store {

/// Reads and writes a run's steps, evaluations and events through a Database
/// connection (one transaction per call, or the caller's; the RunRecorder batches).
class RecordStore {
  public:
    explicit RecordStore(const Database& db) : db_(db) {}

    // Each row gets the run's next sequence number, in the order given; each call
    // returns the number of its first row (0 when `rows` is empty).
    int64_t insertSteps(int64_t run_id, const std::vector<run::StepRecord>& rows) const;
    int64_t insertEvals(int64_t run_id, const std::vector<run::EvalRecord>& rows) const;
    int64_t insertEvents(int64_t run_id, const std::vector<run::EventRecord>& rows) const;

    /// Steps with step > after_step, in order; limit 0 = all.
    std::vector<run::StepRecord> steps(int64_t run_id, int64_t after_step = 0,
                                       int64_t limit = 0) const;
    std::vector<run::EvalRecord> evals(int64_t run_id, int64_t after_step = 0) const;
    /// By step, then in the order they were recorded.
    std::vector<run::EventRecord> events(int64_t run_id) const;
    int64_t stepCount(int64_t run_id) const;

    /// The highest sequence number of the run's rows; 0 when it has none.
    int64_t lastSeq(int64_t run_id) const;
    /// The step of the run's last step row with seq <= `seq`; 0 when there is none.
    int64_t stepAtSeq(int64_t run_id, int64_t seq) const;
    /// The run's rows with seq > `after_seq`, in seq order; at most `limit` (0 = all).
    std::vector<SequencedRecord> recordsSince(int64_t run_id, int64_t after_seq,
                                              int64_t limit = 0) const;

    /// A row insertSequenced did not store because the run holds another at its seq
    /// (or a step or evaluation of its step under another seq): its index in the rows
    /// given and what is stored instead.
    struct SequenceConflict {
        size_t index = 0;
        std::string problem;
    };
    struct SequencedInsert {
        int64_t added = 0;    ///< rows stored
        int64_t present = 0;  ///< rows the run held already, field for field
        std::vector<SequenceConflict> conflicts;
    };
    /// Stores rows under the sequence numbers they carry (what an ingest reads from
    /// another database). A row the run holds already, equal field for field (NaN
    /// equal to NaN), is counted present; one whose seq holds another row (of any kind),
    /// or a step or evaluation whose step is stored under another seq, is a conflict:
    /// the stored row stays as it is.
    SequencedInsert insertSequenced(int64_t run_id, const std::vector<SequencedRecord>& rows) const;

  private:
    /// Throws StoreError(Io) on a read-only connection to a file before schema 6.
    void requireSequence() const;
    template <class R>
    int64_t insert(int64_t run_id, const char* verb, const std::vector<R>& rows,
                   const std::string& what) const;

    const Database& db_;
};

}  // namespace ampbench::store
