#pragma once
#include <QList>
#include <QObject>
#include <QSet>
#include <QString>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>

#include "core/config/ExperimentSpec.h"
#include "core/run/TrainObserver.h"
#include "core/train/Advise.h"
#include "core/train/Capacity.h"
#include "core/train/SetupCheck.h"
#include "core/train/Trainer.h"
#include "ui/MetaTypes.h"

namespace ampbench::ui {

/// What a max-batch search's arms ended with, for one banner: a budget too small
/// for one sample once (with the largest need; each arm's own is in its row), any
/// other error once per arm; empty when every arm finished.
QString batchSearchError(const std::vector<ampbench::train::ArmCapacity>& results);

/// Trains experiments into a database, one run at a time or side by side on GPUs.
///
/// Threads: the object lives on the training thread (TrainingController moves it
/// there); runExperiment() executes on that thread and owns the database
/// connection it opens. Signals leave through queued connections to the GUI
/// thread. The state touched from other threads is the cancel tokens (atomic
/// flags that cancel() and cancelRun() set directly without waiting for this
/// thread's event loop, which is busy while a run trains) and the queue's sets,
/// under removedMutex_.
class TrainingWorker : public QObject {
    Q_OBJECT
  public:
    /// Minimum time between two progress signals of a run.
    static constexpr int kProgressIntervalMs = 100;
    /// Nice value of the training thread and of the threads it starts (LibTorch's
    /// intra-op pool, the prefetcher): when the GUI thread has work it gets a
    /// core at once instead of waiting out the trainer's time slices; while the
    /// GUI is idle training runs as fast as before.
    static constexpr int kTrainingNice = 5;

    explicit TrainingWorker(QObject* parent = nullptr);

    /// Any thread: the running runs stop within one micro-batch and the runs
    /// still queued are marked cancelled.
    void cancel();
    /// Any thread: run `runId` stops within one micro-batch (or, not started yet, at
    /// its first); the others train, side by side or queued. Its rows so far are kept.
    /// False when it started without a token of its own (a trainer that gives none:
    /// such a run stops only with the others, with cancel()).
    bool cancelRun(qint64 runId);
    /// Any thread: run `runId`, not started yet, is left out of the queue (recorded
    /// cancelled, "removed from the queue"); false when it has started already.
    bool removeQueued(qint64 runId);
    /// GUI thread, before queueing the next runExperiment: forgets an earlier cancel.
    void resetCancel();
    bool cancelRequested() const;

    /// Training thread (invoke queued). Lowers the thread's priority to
    /// kTrainingNice, opens `dbPath`, plans the experiment and executes its runs
    /// in order: a spec whose model is `script` through the user's Python script
    /// (core/script, its interpreter model.python), started from this thread, which
    /// outlives it. Never throws: a failure to open or plan ends
    /// in failed(); a failing run ends in runFinished() with status Failed and the
    /// next run starts.
    void runExperiment(const ampbench::config::ExperimentSpec& spec, const QString& dbPath);

    /// Training thread (invoke queued). Searches the max batch of every arm of
    /// `spec` (train::findCapacities), recording each search and trial under
    /// `experimentId` as it happens. Never throws; ends in batchSearchFinished().
    void findBatch(const ampbench::config::ExperimentSpec& spec, qint64 experimentId,
                   const QString& dbPath, const ampbench::train::CapacityOptions& options);

    /// Training thread (invoke queued). The advice of `spec`'s model, data and batch
    /// (train::advise), recorded into `dbPath` as it goes: each max-batch search, pass and
    /// quality run. Never throws; ends in adviceFinished().
    void advise(const ampbench::config::ExperimentSpec& spec,
                const ampbench::train::AdviseOptions& options, const QString& dbPath);

    /// Training options for every run (tests shorten the flush interval).
    void setTrainOptions(const ampbench::train::TrainOptions& options);

  Q_SIGNALS:
    void experimentPlanned(qint64 experimentId, const QList<qint64>& runIds);
    /// A line about how the experiment trains, before it is planned (the fast
    /// verdict's passes of each arm alone, how its runs are packed).
    void note(const QString& line);
    void runStarted(qint64 runId);
    /// At most every kProgressIntervalMs per run, plus the last step. `etaSeconds`
    /// estimates the rest of the whole experiment from this run's samples/s.
    void progress(qint64 runId, qint64 step, qint64 plannedSteps, double etaSeconds);
    void runFinished(qint64 runId, ampbench::run::RunStatus status, const QString& error);
    /// A queued run was left out (removeQueued); runFinished follows for it.
    void runRemoved(qint64 runId);
    void experimentFinished(qint64 experimentId, bool cancelled);
    /// The experiment could not be opened, planned or finished; ends the request.
    void failed(const QString& message);
    /// The check before training found problems (also reported by failed()).
    void setupFailed(const ampbench::train::SetupReport& report);
    /// A max-batch trial of arm `armIndex` (of `arms`) ended; `outcome` as
    /// train::toString gives it; `secondsLeft` estimates the rest of the search (NaN:
    /// not yet known).
    void batchTrial(int armIndex, const QString& arm, qint64 batch, const QString& outcome,
                    qint64 peakBytes, int arms, double secondsLeft);
    /// A max-batch search ended. `error` names what failed (empty when every arm
    /// finished); a cancelled search keeps its trials.
    void batchSearchFinished(qint64 experimentId, bool cancelled, const QString& error);
    /// An advice recorded its experiment.
    void adviceStarted(qint64 experimentId);
    /// Where an advice is: its phase ("timing"), what it measures now, how far through the
    /// phase, and the seconds its whole rest may take (NaN: not known yet).
    void adviceProgress(const QString& phase, const QString& candidate, int done, int total,
                        double secondsLeft);
    /// An advice ended: `end` is its train::AdviseEnd, `message` why where it is not Advised
    /// (or what failed); `experimentId` 0 when nothing was recorded.
    void adviceFinished(qint64 experimentId, int end, const QString& message);

  private:
    void execute(const ampbench::config::ExperimentSpec& spec, const QString& dbPath);

    ampbench::run::CancelToken cancel_;  // set from any thread; read by the trainer
    std::mutex removedMutex_;            // guards the members below up to options_
    /// Each started run's own token (runs side by side train at once); cancel() sets
    /// them all. Kept until resetCancel, so a run's token outlives its training.
    std::map<qint64, std::unique_ptr<ampbench::run::CancelToken>> runTokens_;
    QSet<qint64> cancelRuns_;                // runs asked to stop alone
    QSet<qint64> removed_;                   // queued runs to leave out
    QSet<qint64> started_;                   // runs begun
    QSet<qint64> together_;                  // started without a token of their own
    ampbench::train::TrainOptions options_;  // training thread; set before the first run
};

}  // namespace ampbench::ui
