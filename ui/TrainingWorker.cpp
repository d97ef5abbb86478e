#include "ui/TrainingWorker.h"

#include <QStringList>
#include <chrono>
#include <exception>
#include <limits>

#include "core/store/Database.h"
#include "core/train/Experiment.h"
#include "ui/ThreadPriority.h"

namespace ampbench::ui {
namespace {

using Clock = std::chrono::steady_clock;

/// Samples a run will train on: optimizer steps × micro-batch × K.
double plannedSamples(const config::ExperimentSpec& spec, const train::PlannedRun& run) {
    const int k = spec.arms.at(static_cast<size_t>(run.arm_index)).accumulation;
    return static_cast<double>(run.planned_steps) * spec.micro_batch * k;
}

/// Forwards throttled progress of one run to the worker's signal. Training thread.
class ProgressRelay : public train::TrainObserver {
  public:
    ProgressRelay(TrainingWorker& worker, const train::PlannedRun& run, double runSamples,
                  double laterSamples)
        : worker_(worker), run_(run), runSamples_(runSamples), laterSamples_(laterSamples) {}

    void onStep(const train::StepRecord& s) override {
        const auto now = Clock::now();
        const bool last = s.step >= run_.planned_steps;
        if (!last &&
            now - lastEmit_ < std::chrono::milliseconds(TrainingWorker::kProgressIntervalMs)) {
            return;
        }
        lastEmit_ = now;
        double eta = std::numeric_limits<double>::quiet_NaN();
        if (s.wall_s > 0 && s.samples > 0) {
            const double rate = static_cast<double>(s.samples) / s.wall_s;
            const double left = std::max(0.0, runSamples_ - static_cast<double>(s.samples));
            eta = (left + laterSamples_) / rate;
        }
        Q_EMIT worker_.progress(run_.run_id, s.step, run_.planned_steps, eta);
    }

  private:
    TrainingWorker& worker_;
    const train::PlannedRun& run_;
    double runSamples_;
    double laterSamples_;
    Clock::time_point lastEmit_{};
};

}  // namespace

TrainingWorker::TrainingWorker(QObject* parent) : QObject(parent) {
    registerMetaTypes();
}

void TrainingWorker::cancel() {
    cancel_.cancel();
}

void TrainingWorker::resetCancel() {
    cancel_.reset();
}

bool TrainingWorker::cancelRequested() const {
    return cancel_.cancelled();
}

void TrainingWorker::setTrainOptions(const train::TrainOptions& options) {
    options_ = options;
}

void TrainingWorker::runExperiment(const config::ExperimentSpec& spec, const QString& dbPath) {
    // Before LibTorch starts its thread pool here, so the pool inherits it.
    lowerCurrentThreadPriority(kTrainingNice);
    // The thread boundary: nothing escapes as an exception.
    try {
        execute(spec, dbPath);
    } catch (const train::SpecError& e) {
        Q_EMIT failed(QString::fromStdString(e.what()));
    } catch (const std::exception& e) {
        Q_EMIT failed(QString::fromStdString(e.what()));
    } catch (...) {
        Q_EMIT failed(tr("training stopped on an unknown error"));
    }
}

void TrainingWorker::execute(const config::ExperimentSpec& spec, const QString& dbPath) {
    auto db = store::Database::open(dbPath.toStdString());  // this thread's connection
    db->requireIntact();                                    // nothing is added to a damaged file
    const train::ExperimentPlan plan = train::planExperiment(*db, spec);
    QList<qint64> ids;
    double remaining = 0;
    for (const auto& run : plan.runs) {
        ids.append(run.run_id);
        remaining += plannedSamples(spec, run);
    }
    Q_EMIT experimentPlanned(plan.experiment_id, ids);

    bool cancelled = false;
    for (const auto& run : plan.runs) {
        if (cancel_.cancelled()) {
            cancelled = true;
            break;
        }
        const double runSamples = plannedSamples(spec, run);
        remaining -= runSamples;
        Q_EMIT runStarted(run.run_id);
        ProgressRelay relay(*this, run, runSamples, remaining);
        const train::RunOutcome outcome =
            train::executeRun(*db, spec, run, cancel_, &relay, options_);
        Q_EMIT runFinished(run.run_id, outcome.status, QString::fromStdString(outcome.error));
        if (outcome.status == train::RunStatus::Cancelled) {
            cancelled = true;
            break;
        }
    }
    if (cancelled) {
        train::cancelQueued(*db, plan);
    }
    Q_EMIT experimentFinished(plan.experiment_id, cancelled);
}

void TrainingWorker::findBatch(const config::ExperimentSpec& spec, qint64 experimentId,
                               const QString& dbPath, const train::CapacityOptions& options) {
    QString error;
    bool cancelled = false;
    try {
        auto db = store::Database::open(dbPath.toStdString());  // this thread's connection
        db->requireIntact();
        const auto results = train::findCapacities(
            spec, options, cancel_, db.get(), experimentId,
            [&](int arm, const train::BatchTrial& t) {
                Q_EMIT batchTrial(arm, QString::fromStdString(spec.arms[size_t(arm)].name), t.batch,
                                  QString::fromStdString(train::toString(t.outcome)), t.peak_bytes);
            });
        QStringList errors;
        for (const auto& c : results) {
            cancelled = cancelled || c.result.cancelled;
            if (!c.result.error.empty()) {
                errors << QString::fromStdString(c.arm + ": " + c.result.error);
            }
        }
        error = errors.join(QStringLiteral("\n"));
        cancelled = cancelled || cancel_.cancelled();
    } catch (const std::exception& e) {
        error = QString::fromStdString(e.what());
    } catch (...) {
        error = tr("the max-batch search stopped on an unknown error");
    }
    Q_EMIT batchSearchFinished(experimentId, cancelled, error);
}

}  // namespace ampbench::ui
