#pragma once
#include <QElapsedTimer>
#include <QList>
#include <QObject>
#include <cstdint>
#include <map>
#include <set>
#include <vector>

#include "core/analysis/RankSpread.h"
#include "core/analysis/Summary.h"
#include "core/run/Records.h"
#include "core/store/Rows.h"

namespace ampbench::ui {

class StoreSession;

/// Everything the plots and the summary table show about one run.
struct RunSeries {
    ampbench::store::RunRow row;
    std::vector<ampbench::run::StepRecord> steps;  ///< in step order
    std::vector<ampbench::run::EvalRecord> evals;  ///< in step order
    ampbench::analysis::RunSummary summary;        ///< of the rows above
    /// A data-parallel run's step time by rank, once it has ended; empty otherwise.
    ampbench::analysis::RankStepTimes ranks;
    /// How many runs shared its step times (fused seeds), read with its first steps;
    /// 0 until then.
    int fused_group = 0;
    uint64_t revision = 0;  ///< bumps whenever anything above changes
};

/// Holds the rows of the runs on show and keeps them current: on every change
/// the session reports, it reads only the steps and evaluations after the last
/// ones it has, so a live run costs a few rows per poll however long it is.
/// Long runs are read in slices of bounded time, one per event-loop turn, so
/// opening a big database never stalls the window. GUI thread only (it reads
/// through the session's connection).
class RunDataCache : public QObject {
    Q_OBJECT
  public:
    /// Steps read per query.
    static constexpr int64_t kRowsPerRead = 2000;
    /// Reading stops for this event-loop turn once it took this long; the rest
    /// follows on the next turn.
    static constexpr int kSliceBudgetMs = 6;

    explicit RunDataCache(StoreSession& session, QObject* parent = nullptr);

    /// The runs to hold, in display order; rows of runs already held are kept.
    void setRuns(const QList<qint64>& runIds);
    QList<qint64> runs() const { return order_; }
    /// Null when the run is not held (or was deleted).
    const RunSeries* series(qint64 runId) const;
    /// Reads what is new for every held run; emits updated() when anything was.
    void refresh();

  Q_SIGNALS:
    void updated();
    /// Another database was opened: run ids from before mean other runs now.
    void reset();

  private:
    bool fetchAll();  // true when any held run changed
    void continueReading();
    bool refreshRun(qint64 runId, RunSeries& series, const QElapsedTimer& slice);

    StoreSession& session_;
    QList<qint64> order_;                 // runs on show
    std::map<qint64, RunSeries> series_;  // by run id; only runs in order_
    std::set<qint64> summaryDue_;         // runs with rows read since their summary
    bool more_ = false;                   // a run has rows left to read
};

}  // namespace ampbench::ui
