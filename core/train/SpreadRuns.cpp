#include "core/train/private/SpreadRuns.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#ifdef __linux__
#include <pthread.h>
#endif

#include "core/parallel/Communicator.h"
#include "core/run/SerialObserver.h"
#include "core/train/GpuScheduler.h"
#include "core/train/private/FusedRuns.h"

namespace ampbench::train {

bool canTrainSideBySide(const config::ExperimentSpec& spec) {
    // TF32 is one switch for the whole process (at::globalContext()): a TF32 arm
    // beside a strict fp32 one would change the other's arithmetic.
    // Each run trains on a stream of its own (RunStream), CUDA-graph arms included.
    for (const auto& arm : spec.arms) {
        if (arm.tf32 != spec.arms.front().tf32) {
            return false;
        }
    }
    return true;
}

int spreadGpus(const config::ExperimentSpec& spec, const DeviceChoice& device) {
    if (!device.problem.empty() || !device.placement.isCuda() || !canTrainSideBySide(spec)) {
        return 0;  // the CPU trains one run at a time
    }
    const int visible = parallel::rankCapacity(true).gpus;
    const int gpus = spec.gpus > 0 ? std::min(spec.gpus, visible) : visible;
    return gpus > 1 || spec.runs_per_gpu > 1 ? std::max(1, gpus) : 0;
}

namespace {

/// `m` locked, or nothing locked where there is no `m`.
std::unique_lock<std::mutex> lockOf(std::mutex* m) {
    return m ? std::unique_lock<std::mutex>(*m) : std::unique_lock<std::mutex>();
}

}  // namespace

void trainGroupsSideBySide(store::Database& db, const run::CancelToken& cancel,
                           const ExperimentHooks& hooks, const SideBySide& places,
                           const std::vector<std::vector<PlannedRun>>& groups,
                           const TrainGroupPlaced& train_placed, ExperimentResult& result) {
    GpuScheduler scheduler(places.gpus, places.runs_per_gpu);
    // Guards scheduler, result and error, and the front end: its hooks and the observers
    // they return are called one at a time.
    std::mutex mutex;
    std::condition_variable freed;  // a group ended: its GPUs are free, or it failed
    std::exception_ptr error;       // the first; rethrown once every thread has joined
    std::vector<std::thread> threads;
    for (const auto& group : groups) {
        if (group.empty()) {
            continue;
        }
        const int64_t slot = group.front().run_id;  // the group's place in the scheduler
        std::optional<int> first;
        std::vector<PlannedRun> runs;               // those not left out
        std::vector<run::TrainObserver*> extras;    // the front end's observer of each
        std::vector<const run::CancelToken*> owns;  // each run's own token, when given
        std::vector<PlannedRun> skipped;
        {
            std::unique_lock<std::mutex> lock(mutex);
            try {  // a hook that throws must not leave the started threads unjoined
                int ranks = 1;
                for (const auto& run : group) {
                    ranks = std::max(ranks, places.ranks ? places.ranks(run) : 1);
                }
                if (ranks > scheduler.gpus()) {  // checkRanks stops this before planning
                    throw std::runtime_error("arm '" + group.front().arm + "' needs " +
                                             std::to_string(ranks) + " GPUs, " +
                                             std::to_string(scheduler.gpus()) + " are allowed");
                }
                while (!cancel.cancelled() && !error && !result.cancelled &&
                       !(first = scheduler.place(slot, ranks))) {
                    freed.wait_for(lock, std::chrono::milliseconds(100));  // the cancel is polled
                }
                if (!first) {
                    result.cancelled = result.cancelled || cancel.cancelled();
                    break;
                }
                // Asked when the group's turn comes, as one at a time: a run taken out of
                // the queue while it waited for a GPU never starts.
                for (const auto& run : group) {
                    if (hooks.skip && hooks.skip(run)) {
                        skipped.push_back(run);
                        continue;
                    }
                    owns.push_back(hooks.run_cancel ? hooks.run_cancel(run) : nullptr);
                    extras.push_back(hooks.starting ? hooks.starting(run) : nullptr);
                    runs.push_back(run);
                }
            } catch (...) {
                error = error ? error : std::current_exception();
            }
            if (first && (runs.empty() || error)) {
                scheduler.finish(slot);
            }
            if (error) {
                break;
            }
        }
        // Outside the loop's lock: a run's thread holds db_lock while it tells the front
        // end's observer (under the loop's lock), so the two are taken in that order only.
        bool failed = false;
        for (const auto& run : skipped) {
            try {
                auto db_lock = lockOf(places.db_lock);
                db.finishRun(run.run_id, run::RunStatus::Cancelled,
                             "removed from the queue before it started",
                             run::FailureKind::Cancelled);
            } catch (...) {
                std::lock_guard<std::mutex> lock(mutex);
                error = error ? error : std::current_exception();
                failed = true;
                break;
            }
        }
        if (failed) {
            if (!runs.empty()) {
                std::lock_guard<std::mutex> lock(mutex);
                scheduler.finish(slot);
            }
            break;
        }
        if (runs.empty()) {
            continue;
        }
        auto train = [&, runs, extras, owns, slot, gpu = *first] {
#ifdef __linux__
            pthread_setname_np(pthread_self(), "ampbench-run");  // in top -H, gdb, a profiler
#endif
            std::vector<std::unique_ptr<run::SerialObserver>> serial;
            std::vector<run::TrainObserver*> observers;
            std::vector<const run::CancelToken*> tokens;
            for (size_t i = 0; i < runs.size(); ++i) {
                serial.push_back(extras[i]
                                     ? std::make_unique<run::SerialObserver>(*extras[i], &mutex)
                                     : nullptr);
                observers.push_back(serial.back().get());
                tokens.push_back(owns[i] ? owns[i] : &cancel);
            }
            const std::function<bool()> shared = [&scheduler, &mutex, slot] {
                std::lock_guard<std::mutex> lock(mutex);
                return scheduler.shared(slot);
            };
            std::optional<std::vector<run::RunOutcome>> out;
            std::exception_ptr failure;
            try {
                out = train_placed(runs, gpu, tokens, observers, shared);
            } catch (...) {
                failure = std::current_exception();
            }
            {
                std::lock_guard<std::mutex> lock(mutex);
                for (size_t i = 0; out && i < out->size() && i < runs.size(); ++i) {
                    const run::RunOutcome& o = (*out)[i];
                    result.any_failed = result.any_failed || o.status == run::RunStatus::Failed;
                    // A run cancelled by its own token ends alone; the others go on.
                    result.cancelled = result.cancelled || (o.status == run::RunStatus::Cancelled &&
                                                            (!owns[i] || cancel.cancelled()));
                    try {
                        if (hooks.finished) {
                            hooks.finished(runs[i], o);
                        }
                    } catch (...) {
                        failure = failure ? failure : std::current_exception();
                    }
                }
                error = error ? error : failure;
                scheduler.finish(slot);
            }
            freed.notify_all();
        };
        try {
            threads.emplace_back(std::move(train));
        } catch (...) {  // no thread for it: the group never started
            std::lock_guard<std::mutex> lock(mutex);
            error = error ? error : std::current_exception();
            scheduler.finish(slot);
            break;
        }
    }
    for (auto& t : threads) {
        t.join();
    }
    if (error) {
        try {
            cancelQueued(db, result.plan);  // what never started does not wait for ever
        } catch (...) {
            // the first error says more than a file that cannot take this
        }
        std::rethrow_exception(error);
    }
}

void trainSideBySide(store::Database& db, const run::CancelToken& cancel,
                     const ExperimentHooks& hooks, const SideBySide& places,
                     const TrainPlaced& train_placed, ExperimentResult& result) {
    std::vector<std::vector<PlannedRun>> alone;
    for (const auto& run : result.plan.runs) {
        alone.push_back({run});
    }
    trainGroupsSideBySide(
        db, cancel, hooks, places, alone,
        [&](const std::vector<PlannedRun>& runs, int first_gpu,
            const std::vector<const run::CancelToken*>& tokens,
            const std::vector<run::TrainObserver*>& observers,
            const std::function<bool()>& shared_device) {
            return std::vector<run::RunOutcome>{train_placed(
                runs.front(), first_gpu, *tokens.front(), observers.front(), shared_device)};
        },
        result);
}

void trainSpread(store::Database& db, const config::ExperimentSpec& spec,
                 const run::CancelToken& cancel, const ExperimentHooks& hooks,
                 const TrainOptions& options, int gpus, ExperimentResult& result,
                 const std::vector<std::vector<PlannedRun>>& groups) {
    SideBySide places;
    places.gpus = gpus;
    places.runs_per_gpu = spec.runs_per_gpu;
    places.ranks = [&spec](const PlannedRun& run) {
        return spec.arms.at(static_cast<size_t>(run.arm_index)).ranks;
    };
    std::vector<std::vector<PlannedRun>> units = groups;
    if (units.empty()) {
        for (const auto& run : result.plan.runs) {
            units.push_back({run});
        }
    }
    trainGroupsSideBySide(
        db, cancel, hooks, places, units,
        [&](const std::vector<PlannedRun>& runs, int first_gpu,
            const std::vector<const run::CancelToken*>& tokens,
            const std::vector<run::TrainObserver*>& observers,
            const std::function<bool()>& shared_device) {
            auto connection = store::Database::open(db.path());  // a connection per thread
            TrainOptions o = options;
            o.ranks.first_gpu = first_gpu;
            o.shared_device = shared_device;
            if (runs.size() == 1) {
                return std::vector<run::RunOutcome>{executeRun(
                    *connection, spec, runs.front(), *tokens.front(), observers.front(), o)};
            }
            return trainFusedRuns(*connection, spec, runs, tokens, observers, cancel, o);
        },
        result);
}

}  // namespace ampbench::train
