#include "ui/training/TrainingController.h"

#include "ui/training/TrainingWorker.h"

namespace ampbench::ui {

TrainingController::TrainingController(QObject* parent) : QObject(parent) {
    thread_.setObjectName("ampbench-training");
    worker_ = new TrainingWorker;  // no parent: it moves to thread_
    worker_->moveToThread(&thread_);
    connect(&thread_, &QThread::finished, worker_, &QObject::deleteLater);
    connect(worker_, &TrainingWorker::experimentFinished, this, [this] { setRunning(false); });
    connect(worker_, &TrainingWorker::failed, this, [this] { setRunning(false); });
    connect(worker_, &TrainingWorker::batchSearchFinished, this, [this] { setRunning(false); });
    connect(worker_, &TrainingWorker::adviceFinished, this, [this] { setRunning(false); });
    thread_.start();
}

TrainingController::~TrainingController() {
    worker_->cancel();
    thread_.quit();
    thread_.wait();
}

bool TrainingController::start(const config::ExperimentSpec& spec, const QString& dbPath) {
    if (running_) {
        return false;
    }
    worker_->resetCancel();  // before queueing, so a cancel right after start holds
    setRunning(true);
    TrainingWorker* worker = worker_;
    QMetaObject::invokeMethod(
        worker, [worker, spec, dbPath] { worker->runExperiment(spec, dbPath); },
        Qt::QueuedConnection);
    return true;
}

bool TrainingController::startFindBatch(const config::ExperimentSpec& spec, qint64 experimentId,
                                        const QString& dbPath,
                                        const train::CapacityOptions& options) {
    if (running_) {
        return false;
    }
    worker_->resetCancel();
    setRunning(true);
    TrainingWorker* worker = worker_;
    QMetaObject::invokeMethod(
        worker,
        [worker, spec, experimentId, dbPath, options] {
            worker->findBatch(spec, experimentId, dbPath, options);
        },
        Qt::QueuedConnection);
    return true;
}

bool TrainingController::startAdvice(const config::ExperimentSpec& spec,
                                     const train::AdviseOptions& options, const QString& dbPath) {
    if (running_) {
        return false;
    }
    worker_->resetCancel();
    setRunning(true);
    TrainingWorker* worker = worker_;
    QMetaObject::invokeMethod(
        worker, [worker, spec, options, dbPath] { worker->advise(spec, options, dbPath); },
        Qt::QueuedConnection);
    return true;
}

void TrainingController::cancel() {
    if (running_) {
        worker_->cancel();
    }
}

bool TrainingController::cancelRun(qint64 runId) {
    return running_ && worker_->cancelRun(runId);
}

bool TrainingController::removeQueued(qint64 runId) {
    return running_ && worker_->removeQueued(runId);
}

void TrainingController::setRunning(bool running) {
    if (running_ != running) {
        running_ = running;
        Q_EMIT runningChanged(running);
    }
}

}  // namespace ampbench::ui
