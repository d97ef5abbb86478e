#include "ui/training/TrainingWorker.h"

#include <QStringList>
#include <algorithm>
#include <chrono>
#include <exception>
#include <limits>
#include <map>
#include <memory>

#include "core/config/Placement.h"
#include "core/parallel/Machine.h"
#include "core/script/Trainers.h"
#include "core/store/Database.h"
#include "core/train/Experiment.h"
#include "core/train/SetupCheck.h"
#include "core/util/Format.h"
#include "ui/training/ThreadPriority.h"

namespace ampbench::ui {
namespace {

using Clock = std::chrono::steady_clock;

/// Samples a run will train on: optimizer steps × micro-batch × K.
using train::plannedSamples;

/// Forwards throttled progress of one run to the worker's signal. Training thread.
class ProgressRelay : public run::TrainObserver {
  public:
    ProgressRelay(TrainingWorker& worker, const train::PlannedRun& run, double runSamples,
                  double laterSamples)
        : worker_(worker), run_(run), runSamples_(runSamples), laterSamples_(laterSamples) {}

    void onStep(const run::StepRecord& s) override {
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

QString batchSearchError(const std::vector<train::ArmCapacity>& results) {
    // A budget too small for one sample is one problem however many arms hit it:
    // said once, with the most one sample added (each arm's own is in its row).
    QStringList short_arms;
    QString widest;
    int64_t most = 0;
    int64_t budget = 0;
    QStringList others;
    for (const auto& c : results) {
        const auto& r = c.result;
        if (r.error.empty()) {
            continue;
        }
        if (r.budget_error && !r.trials.empty() && r.trials.back().batch == 1) {
            short_arms << QString::fromStdString(c.arm);
            if (r.trials.back().peak_bytes >= most) {
                most = r.trials.back().peak_bytes;
                widest = QString::fromStdString(c.arm);
            }
            budget = c.budget_bytes;
        } else {
            const QString line = QString::fromStdString(c.arm + ": " + r.error);
            if (!others.contains(line)) {
                others << line;
            }
        }
    }
    if (!short_arms.isEmpty()) {
        const QString where =
            short_arms.size() == static_cast<int>(results.size()) && results.size() > 1
                ? TrainingWorker::tr("every arm")
                : short_arms.join(QStringLiteral(", "));
        others.prepend(TrainingWorker::tr("the budget of %1 is below what one sample needs in %2 "
                                          "(batch 1 adds up to %3, in %4); give a budget above %3")
                           .arg(QString::fromStdString(util::formatBytes(budget)), where,
                                QString::fromStdString(util::formatBytes(most)), widest));
    }
    return others.join(QStringLiteral("\n"));
}

TrainingWorker::TrainingWorker(QObject* parent) : QObject(parent) {
    registerMetaTypes();
}

void TrainingWorker::cancel() {
    cancel_.cancel();  // before the lock: a run starting now sees it (run_cancel below)
    const std::lock_guard<std::mutex> lock(removedMutex_);
    for (auto& [id, token] : runTokens_) {
        token->cancel();  // a run with its own token hears only that one
    }
}

bool TrainingWorker::cancelRun(qint64 runId) {
    // Either this finds the run's token, or the run's start finds this request.
    const std::lock_guard<std::mutex> lock(removedMutex_);
    if (together_.contains(runId)) {
        return false;
    }
    cancelRuns_.insert(runId);
    if (auto it = runTokens_.find(runId); it != runTokens_.end()) {
        it->second->cancel();
    }
    return true;
}

bool TrainingWorker::removeQueued(qint64 runId) {
    const std::lock_guard<std::mutex> lock(removedMutex_);
    if (started_.contains(runId)) {
        return false;
    }
    removed_.insert(runId);
    return true;
}

void TrainingWorker::resetCancel() {
    cancel_.reset();
    const std::lock_guard<std::mutex> lock(removedMutex_);
    runTokens_.clear();
    cancelRuns_.clear();
    together_.clear();
    removed_.clear();
    started_.clear();
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
    } catch (const train::SetupError& e) {
        Q_EMIT setupFailed(e.report());
        Q_EMIT failed(QString::fromStdString(e.what()));
    } catch (const std::exception& e) {
        Q_EMIT failed(QString::fromStdString(e.what()));
    } catch (...) {
        Q_EMIT failed(tr("training stopped on an unknown error"));
    }
}

void TrainingWorker::execute(const config::ExperimentSpec& spec, const QString& dbPath) {
    auto db = store::Database::open(dbPath.toStdString());  // this thread's connection
    double remaining = 0;
    // One relay per run: runs spread over GPUs train at once, each with its own.
    std::map<int64_t, std::unique_ptr<ProgressRelay>> relays;
    train::ExperimentHooks hooks;
    hooks.planned = [&](const train::ExperimentPlan& plan) {
        QList<qint64> ids;
        for (const auto& run : plan.runs) {
            ids.append(run.run_id);
            remaining += plannedSamples(spec, run);
        }
        Q_EMIT experimentPlanned(plan.experiment_id, ids);
    };
    hooks.starting = [&](const train::PlannedRun& run) -> run::TrainObserver* {
        {
            // run_cancel comes first where the run can stop alone.
            const std::lock_guard<std::mutex> lock(removedMutex_);
            if (runTokens_.count(run.run_id) == 0) {
                together_.insert(run.run_id);
            }
        }
        const double runSamples = plannedSamples(spec, run);
        remaining -= runSamples;
        Q_EMIT runStarted(run.run_id);
        auto& relay = relays[run.run_id];
        relay = std::make_unique<ProgressRelay>(*this, run, runSamples, remaining);
        return relay.get();
    };
    hooks.finished = [&](const train::PlannedRun& run, const run::RunOutcome& outcome) {
        Q_EMIT runFinished(run.run_id, outcome.status, QString::fromStdString(outcome.error));
    };
    hooks.note = [this](const std::string& line) { Q_EMIT note(QString::fromStdString(line)); };
    hooks.skip = [&](const train::PlannedRun& run) {
        {
            const std::lock_guard<std::mutex> lock(removedMutex_);
            if (!removed_.contains(run.run_id)) {
                started_.insert(run.run_id);  // from here on it cannot be removed
                return false;
            }
        }
        remaining -= plannedSamples(spec, run);
        Q_EMIT runRemoved(run.run_id);
        Q_EMIT runFinished(run.run_id, run::RunStatus::Cancelled,
                           tr("removed from the queue before it started"));
        return true;
    };
    // Every run, one at a time or side by side, gets a token of its own.
    hooks.run_cancel = [&](const train::PlannedRun& run) -> const run::CancelToken* {
        const std::lock_guard<std::mutex> lock(removedMutex_);
        auto& token = runTokens_[run.run_id];
        token = std::make_unique<run::CancelToken>();
        if (cancelRuns_.contains(run.run_id) || cancel_.cancelled()) {
            token->cancel();
        }
        return token.get();
    };
    script::Trainers trainers;
    trainers.options = options_;
    if (script::trainsWithScript(spec)) {
        // The user's Python script trains each run; its records stream in as they come.
        trainers.script.say = [this](const std::string& line) {
            Q_EMIT note(QString::fromStdString(line));
        };
        // The GPUs the scripts may spread over, as the CLI counts them.
        trainers.script.device = train::resolveDevice(spec.device);
        trainers.script.gpus =
            config::onCuda(trainers.script.device) ? parallel::rankCapacity(true).gpus : 0;
    }
    const train::ExperimentResult result =
        script::trainExperiment(*db, spec, cancel_, hooks, trainers);
    Q_EMIT experimentFinished(result.plan.experiment_id, result.cancelled);
}

void TrainingWorker::findBatch(const config::ExperimentSpec& spec, qint64 experimentId,
                               const QString& dbPath, const train::CapacityOptions& options) {
    QString error;
    bool cancelled = false;
    try {
        auto db = store::Database::open(dbPath.toStdString());  // this thread's connection
        db->requireIntact();
        const auto results = train::findCapacities(
            spec, options, cancel_, db.get(), experimentId, [&](const train::CapacityProgress& p) {
                const train::BatchTrial& t = p.trial;
                Q_EMIT batchTrial(p.arm, QString::fromStdString(spec.arms[size_t(p.arm)].name),
                                  t.batch, QString::fromStdString(train::toString(t.outcome)),
                                  t.peak_bytes, p.arms, p.seconds_left);
            });
        for (const auto& c : results) {
            cancelled = cancelled || c.result.cancelled;
        }
        error = batchSearchError(results);
        cancelled = cancelled || cancel_.cancelled();
    } catch (const std::exception& e) {
        error = QString::fromStdString(e.what());
    } catch (...) {
        error = tr("the max-batch search stopped on an unknown error");
    }
    Q_EMIT batchSearchFinished(experimentId, cancelled, error);
}

void TrainingWorker::advise(const config::ExperimentSpec& spec, const train::AdviseOptions& options,
                            const QString& dbPath) {
    qint64 id = 0;
    int end = static_cast<int>(train::AdviseEnd::Cancelled);
    QString message;
    try {
        lowerCurrentThreadPriority(kTrainingNice);
        auto db = store::Database::open(dbPath.toStdString());  // this thread's connection
        train::AdviseHooks hooks;
        hooks.started = [&](int64_t experiment) {
            id = experiment;
            Q_EMIT adviceStarted(experiment);
        };
        hooks.progress = [this](const train::AdviseProgress& p) {
            Q_EMIT adviceProgress(QString::fromStdString(train::toString(p.phase)),
                                  QString::fromStdString(p.candidate), p.done, p.total,
                                  p.seconds_left);
        };
        hooks.note = [this](const std::string& line) { Q_EMIT note(QString::fromStdString(line)); };
        const auto result = train::advise(*db, train::validSpec(spec), options, cancel_, hooks,
                                          train::builtInTrainer(*db, options_));
        id = result.experiment_id;
        end = static_cast<int>(result.end);
        message = QString::fromStdString(result.message);
    } catch (const std::exception& e) {
        message = QString::fromStdString(e.what());
    } catch (...) {
        message = tr("the advice stopped on an unknown error");
    }
    Q_EMIT adviceFinished(id, end, message);
}

}  // namespace ampbench::ui
