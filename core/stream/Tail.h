#pragma once
// Reads runs of a database as stream records, as `ampbench-cli tail` writes them:
// each run's experiment and run records first, then its rows after a sequence
// number with its per-layer numerics, then (once it has ended, or when asked) its
// status.
#include <cstdint>
#include <functional>
#include <map>
#include <vector>

#include "core/store/Database.h"
#include "core/store/RecordStore.h"
#include "core/stream/RecordStream.h"

namespace ampbench::stream {

class Tail {
  public:
    using Sink = std::function<void(const Record&)>;
    /// `since`: rows with seq above this are written (per run; runs not named start
    /// after `since_all`), and the numerics of the steps after the step of the last
    /// step row at or before it. StoreError(NotFound) for a run the database does not
    /// hold.
    Tail(const store::Database& db, std::vector<int64_t> run_ids, int64_t since_all = 0,
         std::map<int64_t, int64_t> since = {});

    /// Writes what is new since the last call (the first call: the experiment and run
    /// records too; the run record again when its status changed, e.g. queued to running
    /// with its environment). A step's numerics record goes just before the first step
    /// row of that step or a later one, so a reader that holds a step row holds its
    /// numerics (the recorder commits them with that row or before). A run found ended
    /// (any status but queued or running, read before its rows) gets the numerics left
    /// (of steps without a row) and its status record, and is done. Returns true when
    /// every run is.
    bool poll(const Sink& out);
    /// Writes the status record of every run not done yet, as it is now.
    void closeAll(const Sink& out);
    bool done() const;

    static constexpr int64_t kChunk = 4096;  ///< rows read per query

  private:
    struct Watched {
        int64_t id = 0;
        int64_t last_seq = 0;       ///< the highest seq written or known to be before `since`
        int64_t numerics_step = 0;  ///< numerics up to this step written or before `since`
        bool introduced = false;
        bool done = false;
        run::RunStatus sent = run::RunStatus::Queued;  ///< status of the run record last written
    };
    void introduce(Watched& w, const store::RunRow& row, const Sink& out);
    void status(Watched& w, const store::RunRow& row, const Sink& out);
    /// Writes the run's rows after w.last_seq, with the numerics of their steps.
    void sendRows(Watched& w, const Sink& out);

    const store::Database& db_;
    store::RecordStore records_{db_};
    std::vector<Watched> runs_;
    std::vector<int64_t> experiments_sent_;
};

}  // namespace ampbench::stream
