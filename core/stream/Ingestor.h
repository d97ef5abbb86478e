#pragma once
// Reads a record stream into a database, line by line, idempotently: the stream's
// experiments and runs map to local rows by their origin (a label for the machine,
// the id of the database they were written from, and their ids there), rows by
// (run, seq) and per-layer numerics by (run, step, kind, name), so reading the same
// stream twice, or a resumed stream that repeats rows, adds nothing the second time.
// What contradicts the rows here (another row at a seq, rows after a run's end, a
// run that is not the one stored under its ids) is reported and skipped.
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/store/Database.h"
#include "core/store/ImportStore.h"
#include "core/store/RecordStore.h"
#include "core/store/RunRecorder.h"
#include "core/stream/RecordStream.h"

namespace ampbench::stream {

struct IngestCounts {
    int64_t lines = 0;             ///< lines read, blank ones included
    int64_t experiments = 0;       ///< experiments added to the database
    int64_t runs = 0;              ///< runs added to the database
    int64_t rows_added = 0;        ///< steps, evaluations and events added
    int64_t rows_present = 0;      ///< rows the database held already (a replay)
    int64_t rows_refused = 0;      ///< rows not stored: they contradict what is here
    int64_t statuses = 0;          ///< status records applied to their run
    int64_t numerics_added = 0;    ///< per-layer numerics rows added
    int64_t numerics_present = 0;  ///< numerics rows the database held already (replaced)
};

struct IngestProblem {
    enum class Kind {
        Malformed,  ///< a line that is not a record; skipped
        Gap,        ///< sequence numbers missing in a run; the rows after it are kept
        Orphan,     ///< a record of a run or experiment the stream never introduced; skipped
        Conflict,   ///< a record that contradicts what is stored or what the stream said
                    ///< before (another row at its seq, rows after the run's end, another
                    ///< origin's run under the same ids); skipped, what is here is kept
        Refused,    ///< no header first, or a stream version this build does not read
    };
    Kind kind = Kind::Malformed;
    int64_t line = 0;  ///< 1-based; 0 when found at the end of the stream
    std::string message;
};

/// How an ingest lives with another program that holds the database's lock: as a
/// training run does (store::LockPolicy: each try waits `try_wait`, pauses double up
/// to `max_backoff`, one write gives up after `limit`). `notice` hears when a wait
/// passes a second (what it waits to write) and when it ends.
struct IngestLockWait {
    store::LockPolicy policy;
    std::function<void(const std::string&)> notice;
};

/// Where the records after a header come from: the label they are stored under and
/// the id of the database that wrote them (empty when the header carries none).
struct IngestSource {
    std::string label;
    std::string database;
    bool operator==(const IngestSource& o) const {
        return label == o.label && database == o.database;
    }
};

/// Feed it the stream's lines in order, then finish(). Rows (numerics rows too) are
/// held and written in one transaction every few thousand rows, once the oldest has
/// waited kCommitAfter and another line comes, before any experiment, run or status
/// record, and on commit() (call it when the input pauses, as `ingest` does after
/// 100 ms of quiet: rows then reach the file, and a watcher of it, within 250 ms). A
/// malformed line is reported and skipped; a gap is reported and the rows after it
/// are kept (a later stream can fill it: the missing rows are added when they come).
/// Each header starts the records of its database: streams of two machines written
/// one after the other stay apart. StoreError from the database propagates (a lock
/// past the wait's limit too). Two ingests of one stream may run at once: each row is
/// stored once.
class Ingestor {
  public:
    /// `origin` labels the machine the stream comes from; empty: the host name in the
    /// stream's header ("remote" when it has none). Without `lock_wait`, a write waits
    /// for another program's lock as any statement does (Database::kLockWaitMs).
    explicit Ingestor(store::Database& db, std::string origin = {},
                      std::optional<IngestLockWait> lock_wait = std::nullopt);
    ~Ingestor();  ///< writes what is held; errors are lost, so call finish()
    Ingestor(const Ingestor&) = delete;
    Ingestor& operator=(const Ingestor&) = delete;

    /// One line, without its newline. Returns false once the stream was refused (its
    /// first record is not a header, or a header's version is not kStreamVersion):
    /// nothing after that is read.
    bool feed(const std::string& line);
    /// Writes the rows held.
    void commit();
    /// Writes the rows held; an input without a header (empty) is refused here.
    void finish();
    /// The input has ended for good (the ingest of a file, or of a pipe, is over):
    /// every run it touched that is still queued or running here and got no final
    /// status from it is marked interrupted, saying after which record its stream
    /// stopped (a full disk, a killed writer), and reported. A later stream of the run
    /// takes that back: its run and status records are applied as usual.
    void markCutOffRuns();

    const IngestCounts& counts() const { return counts_; }
    const std::vector<IngestProblem>& problems() const { return problems_; }
    bool refused() const { return refused_; }
    /// The label the rows are stored under (known after the header; the latest one).
    const std::string& origin() const { return source_.label; }
    /// Every origin the stream's headers named, in order, each once.
    const std::vector<IngestSource>& sources() const { return sources_; }
    /// Local ids of the runs this stream touched, in the order they came.
    const std::vector<int64_t>& localRuns() const { return local_runs_; }

    static constexpr size_t kBatchRows = 4096;
    static constexpr std::chrono::milliseconds kCommitAfter{150};

  private:
    struct RunState {
        int64_t local = 0;
        int64_t last_seq = 0;  ///< highest seq known here (database, then stream)
        int64_t promised = 0;  ///< last_seq of the final status record
        bool ended = false;    ///< a final status record came: rows after `promised` cannot
        bool checked = false;  ///< its run record matched the run here
        std::vector<store::SequencedRecord> pending;
        std::vector<int64_t> pending_lines;
        std::vector<run::NumericsRecord> pending_numerics;
    };
    /// An experiment or run of the stream looked up (or added) here.
    struct Resolved {
        int64_t local = 0;
        bool added = false;
        std::string mismatch;  ///< why the row here under its ids is another one
    };
    void apply(Record&& record);
    void header(const Header& h);
    void experiment(const store::ExperimentRow& e);
    void runRecord(const store::RunRow& r);
    void row(RowRecord&& r);
    void numerics(NumericsGroup&& g);
    void status(const StatusRecord& s);
    Resolved resolveExperiment(const store::ExperimentRow& e);
    Resolved resolveRun(const store::RunRow& r, int64_t local_experiment);
    /// The run's state, looked up in the database the first time; null when unknown.
    RunState* known(int64_t remote_run);
    /// A run of the stream has its local row: remembered for markCutOffRuns.
    void touch(int64_t remote_run, int64_t local);
    /// A record of a run the stream never introduced: the first is reported, the
    /// rest counted and reported at the end.
    void orphan(int64_t remote_run, const std::string& what);
    /// After a row is held: commits when the batch is full or has waited kCommitAfter.
    void held();
    /// Runs `write` (one transaction) until it gets past another program's lock.
    template <class Write>
    void withLock(const std::string& what, Write write);
    void problem(IngestProblem::Kind kind, int64_t line, std::string message);
    std::string runName(int64_t remote_run) const;
    std::string sourceName() const;

    store::Database& db_;
    store::ImportStore imports_{db_};
    store::RecordStore records_{db_};
    std::string fixed_origin_;
    std::optional<IngestLockWait> lock_wait_;
    IngestSource source_;
    std::vector<IngestSource> sources_;
    bool header_seen_ = false;
    bool refused_ = false;
    int64_t line_ = 0;
    size_t pending_rows_ = 0;
    std::chrono::steady_clock::time_point held_since_;  ///< the oldest row held came
    IngestCounts counts_;
    std::vector<IngestProblem> problems_;
    std::map<int64_t, int64_t> experiments_;          ///< remote id -> local id
    std::map<int64_t, RunState> runs_;                ///< remote id -> state
    std::map<int64_t, int64_t> refused_experiments_;  ///< remote id -> line refused at
    std::map<int64_t, int64_t> refused_runs_;         ///< remote id -> line refused at
    std::map<int64_t, int64_t> orphans_;              ///< remote run -> records skipped
    std::vector<int64_t> local_runs_;
    /// Each local run touched: its id and origin in the stream, and whether the stream
    /// ended it (a final status applied).
    struct Touched {
        int64_t remote = 0;
        std::string origin;
        bool ended = false;
    };
    std::map<int64_t, Touched> touched_;  ///< local id -> what the stream said of it
};

/// The last sequence number stored here of run `remote_run` from `origin`, so a
/// stream can be resumed after it (`tail --since`); nullopt when the run is not here.
/// Without `database`: the run imported last from any database under that label.
std::optional<int64_t> lastSeqFromOrigin(const store::Database& db, const std::string& origin,
                                         int64_t remote_run);
std::optional<int64_t> lastSeqFromOrigin(const store::Database& db, const std::string& origin,
                                         const std::string& database, int64_t remote_run);

}  // namespace ampbench::stream
