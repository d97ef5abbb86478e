#pragma once
// Reads a record stream into a database, line by line, idempotently: the stream's
// experiments and runs map to local rows by their origin (a label for the machine
// and their ids there), rows by (run, seq) and per-layer numerics by (run, step,
// kind, name), so reading the same stream twice, or a resumed stream that repeats
// rows, adds nothing the second time.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/store/Database.h"
#include "core/stream/RecordStream.h"

namespace ampbench::stream {

struct IngestCounts {
    int64_t lines = 0;             ///< lines read, blank ones included
    int64_t experiments = 0;       ///< experiments added to the database
    int64_t runs = 0;              ///< runs added to the database
    int64_t rows_added = 0;        ///< steps, evaluations and events added
    int64_t rows_present = 0;      ///< rows the database held already (a replay)
    int64_t statuses = 0;          ///< status records applied to their run
    int64_t numerics_added = 0;    ///< per-layer numerics rows added
    int64_t numerics_present = 0;  ///< numerics rows the database held already (replaced)
};

struct IngestProblem {
    enum class Kind {
        Malformed,  ///< a line that is not a record; skipped
        Gap,        ///< sequence numbers missing in a run; the rows after it are kept
        Orphan,     ///< a record of a run or experiment the stream never introduced; skipped
        Refused,    ///< no header first, or a stream version this build does not read
    };
    Kind kind = Kind::Malformed;
    int64_t line = 0;  ///< 1-based; 0 when found at the end of the stream
    std::string message;
};

/// Feed it the stream's lines in order, then finish(). Rows (numerics rows too) are
/// held and written in one transaction every few thousand rows, before any
/// experiment, run or status record, and on commit() (call it when the input pauses,
/// so a watcher of the database sees what has arrived). A malformed line is reported
/// and skipped; a gap is reported and the rows after it are kept (a later stream can
/// fill it: the missing rows are added when they come). StoreError from the database
/// propagates.
class Ingestor {
  public:
    /// `origin` labels the machine the stream comes from; empty: the host name in the
    /// stream's header ("remote" when it has none).
    explicit Ingestor(store::Database& db, std::string origin = {});
    ~Ingestor();  ///< writes what is held; errors are lost, so call finish()
    Ingestor(const Ingestor&) = delete;
    Ingestor& operator=(const Ingestor&) = delete;

    /// One line, without its newline. Returns false once the stream was refused (its
    /// first record is not a header, or its version is not kStreamVersion): nothing
    /// after that is read.
    bool feed(const std::string& line);
    /// Writes the rows held.
    void commit();
    /// Writes the rows held; an input without a header (empty) is refused here.
    void finish();

    const IngestCounts& counts() const { return counts_; }
    const std::vector<IngestProblem>& problems() const { return problems_; }
    bool refused() const { return refused_; }
    /// The label the rows are stored under (known after the header).
    const std::string& origin() const { return origin_; }
    /// Local ids of the runs this stream touched, in the order they came.
    const std::vector<int64_t>& localRuns() const { return local_runs_; }

    static constexpr size_t kBatchRows = 4096;

  private:
    struct RunState {
        int64_t local = 0;
        int64_t last_seq = 0;  ///< highest seq known here (database, then stream)
        int64_t promised = 0;  ///< last_seq of the latest status record
        bool final = false;
        std::vector<store::SequencedRecord> pending;
        std::vector<run::NumericsRecord> pending_numerics;
    };
    void apply(Record&& record);
    void header(const Header& h);
    void experiment(const store::ExperimentRow& e);
    void runRecord(const store::RunRow& r);
    void row(RowRecord&& r);
    void numerics(NumericsGroup&& g);
    void status(const StatusRecord& s);
    /// The run's state, looked up in the database the first time; null when unknown.
    RunState* known(int64_t remote_run);
    void problem(IngestProblem::Kind kind, int64_t line, std::string message);
    std::string runName(int64_t remote_run) const;

    store::Database& db_;
    std::string origin_;
    bool header_seen_ = false;
    bool refused_ = false;
    int64_t line_ = 0;
    size_t pending_rows_ = 0;
    IngestCounts counts_;
    std::vector<IngestProblem> problems_;
    std::map<int64_t, int64_t> experiments_;  ///< remote id -> local id
    std::map<int64_t, RunState> runs_;        ///< remote id -> state
    std::vector<int64_t> local_runs_;
};

/// The last sequence number stored here of run `remote_run` from `origin`, so a
/// stream can be resumed after it (`tail --since`); nullopt when the run is not here.
std::optional<int64_t> lastSeqFromOrigin(const store::Database& db, const std::string& origin,
                                         int64_t remote_run);

}  // namespace ampbench::stream
