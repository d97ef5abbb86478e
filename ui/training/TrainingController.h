#pragma once
#include <QObject>
#include <QString>
#include <QThread>

#include "core/config/ExperimentSpec.h"
#include "core/train/Advise.h"
#include "core/train/Capacity.h"

namespace ampbench::ui {

class TrainingWorker;

/// Owns the training thread and the TrainingWorker on it; one experiment at a
/// time. Lives on the GUI thread; connect to worker() for progress and results.
class TrainingController : public QObject {
    Q_OBJECT
  public:
    explicit TrainingController(QObject* parent = nullptr);
    /// Cancels a running experiment and waits for the thread to end.
    ~TrainingController() override;

    /// Queues `spec` on the worker; false (nothing queued) while one is running.
    bool start(const ampbench::config::ExperimentSpec& spec, const QString& dbPath);
    /// Queues a max-batch search of every arm of `spec`, recorded under
    /// `experimentId`; false while the worker is busy (it needs the device alone).
    bool startFindBatch(const ampbench::config::ExperimentSpec& spec, qint64 experimentId,
                        const QString& dbPath, const ampbench::train::CapacityOptions& options);
    /// Queues the advice of `spec`'s model, data and batch; false while the worker is busy.
    bool startAdvice(const ampbench::config::ExperimentSpec& spec,
                     const ampbench::train::AdviseOptions& options, const QString& dbPath);
    /// Returns at once; the worker stops within one micro-batch.
    void cancel();
    /// Returns at once: run `runId` stops within one micro-batch, the others go on.
    /// False when nothing runs or the run can stop only with the others
    /// (TrainingWorker::cancelRun).
    bool cancelRun(qint64 runId);
    /// Leaves a queued run out; false when it has started (or nothing runs).
    bool removeQueued(qint64 runId);
    bool isRunning() const { return running_; }
    /// For connecting to its signals only; its methods run on the training thread.
    TrainingWorker* worker() const { return worker_; }

  Q_SIGNALS:
    void runningChanged(bool running);

  private:
    void setRunning(bool running);

    QThread thread_;
    TrainingWorker* worker_ = nullptr;  // lives on thread_; deleted when it finishes
    bool running_ = false;              // GUI thread
};

}  // namespace ampbench::ui
