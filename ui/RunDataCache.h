#pragma once
#include <QList>
#include <QObject>
#include <cstdint>
#include <map>
#include <vector>

#include "core/analysis/Summary.h"
#include "core/store/Rows.h"
#include "core/train/Records.h"

namespace ampbench::ui {

class StoreSession;

/// Everything the plots and the summary table show about one run.
struct RunSeries {
    ampbench::store::RunRow row;
    std::vector<ampbench::train::StepRecord> steps;  ///< in step order
    std::vector<ampbench::train::EvalRecord> evals;  ///< in step order
    ampbench::analysis::RunSummary summary;          ///< of the rows above
    uint64_t revision = 0;                           ///< bumps whenever anything above changes
};

/// Holds the rows of the runs on show and keeps them current: on every change
/// the session reports, it reads only the steps and evaluations after the last
/// ones it has, so a live run costs a few rows per poll however long it is.
/// GUI thread only (it reads through the session's connection).
class RunDataCache : public QObject {
    Q_OBJECT
  public:
    /// Steps read per run and refresh; the rest follows on the next event-loop turn.
    static constexpr int64_t kMaxRowsPerRead = 20000;

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

  private:
    bool fetchAll();  // true when any held run changed
    void continueReading();
    bool refreshRun(qint64 runId, RunSeries& series);

    StoreSession& session_;
    QList<qint64> order_;                 // runs on show
    std::map<qint64, RunSeries> series_;  // by run id; only runs in order_
    bool more_ = false;                   // a run has rows left to read
};

}  // namespace ampbench::ui
