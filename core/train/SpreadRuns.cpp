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

int spreadGpus(const config::ExperimentSpec& spec) {
    if (resolveDevice(spec.device).rfind("cuda", 0) != 0 || !canTrainSideBySide(spec)) {
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

void trainSideBySide(store::Database& db, const run::CancelToken& cancel,
                     const ExperimentHooks& hooks, const SideBySide& places,
                     const TrainPlaced& train_placed, ExperimentResult& result) {
    GpuScheduler scheduler(places.gpus, places.runs_per_gpu);
    // Guards scheduler, result and error, and the front end: its hooks and the observers
    // they return are called one at a time.
    std::mutex mutex;
    std::condition_variable freed;  // a run ended: its GPUs are free, or it failed
    std::exception_ptr error;       // the first; rethrown once every thread has joined
    std::vector<std::thread> threads;
    for (const auto& run : result.plan.runs) {
        std::optional<int> first;
        run::TrainObserver* extra = nullptr;
        const run::CancelToken* own = nullptr;  // the run's alone, when the front end gives one
        bool skipped = false;
        {
            std::unique_lock<std::mutex> lock(mutex);
            try {  // a hook that throws must not leave the started threads unjoined
                const int ranks = places.ranks ? places.ranks(run) : 1;
                if (ranks > scheduler.gpus()) {  // checkRanks stops this before planning
                    throw std::runtime_error("arm '" + run.arm + "' needs " +
                                             std::to_string(ranks) + " GPUs, " +
                                             std::to_string(scheduler.gpus()) + " are allowed");
                }
                while (!cancel.cancelled() && !error && !result.cancelled &&
                       !(first = scheduler.place(run.run_id, ranks))) {
                    freed.wait_for(lock, std::chrono::milliseconds(100));  // the cancel is polled
                }
                if (!first) {
                    result.cancelled = result.cancelled || cancel.cancelled();
                    break;
                }
                // Asked when the run's turn comes, as one at a time: a run taken out of
                // the queue while it waited for a GPU never starts.
                skipped = hooks.skip && hooks.skip(run);
                if (!skipped) {
                    own = hooks.run_cancel ? hooks.run_cancel(run) : nullptr;
                    extra = hooks.starting ? hooks.starting(run) : nullptr;
                }
            } catch (...) {
                error = error ? error : std::current_exception();
            }
            if (first && (skipped || error)) {
                scheduler.finish(run.run_id);
            }
            if (error) {
                break;
            }
        }
        // Outside the loop's lock: a run's thread holds db_lock while it tells the front
        // end's observer (under the loop's lock), so the two are taken in that order only.
        if (skipped) {
            try {
                auto db_lock = lockOf(places.db_lock);
                db.finishRun(run.run_id, run::RunStatus::Cancelled,
                             "removed from the queue before it started",
                             run::FailureKind::Cancelled);
            } catch (...) {
                std::lock_guard<std::mutex> lock(mutex);
                error = error ? error : std::current_exception();
                break;
            }
            continue;
        }
        auto train = [&, run, extra, own, gpu = *first] {
#ifdef __linux__
            pthread_setname_np(pthread_self(), "ampbench-run");  // in top -H, gdb, a profiler
#endif
            std::optional<run::SerialObserver> serial;
            if (extra) {
                serial.emplace(*extra, &mutex);
            }
            const std::function<bool()> shared = [&scheduler, &mutex, id = run.run_id] {
                std::lock_guard<std::mutex> lock(mutex);
                return scheduler.shared(id);
            };
            std::optional<run::RunOutcome> out;
            std::exception_ptr failure;
            try {
                out = train_placed(run, gpu, own ? *own : cancel, serial ? &*serial : nullptr,
                                   shared);
            } catch (...) {
                failure = std::current_exception();
            }
            {
                std::lock_guard<std::mutex> lock(mutex);
                if (out) {
                    result.any_failed = result.any_failed || out->status == run::RunStatus::Failed;
                    // A run cancelled by its own token ends alone; the others go on.
                    result.cancelled =
                        result.cancelled ||
                        (out->status == run::RunStatus::Cancelled && (!own || cancel.cancelled()));
                    try {
                        if (hooks.finished) {
                            hooks.finished(run, *out);
                        }
                    } catch (...) {
                        failure = std::current_exception();
                    }
                }
                error = error ? error : failure;
                scheduler.finish(run.run_id);
            }
            freed.notify_all();
        };
        try {
            threads.emplace_back(std::move(train));
        } catch (...) {  // no thread for it: the run never started
            std::lock_guard<std::mutex> lock(mutex);
            error = error ? error : std::current_exception();
            scheduler.finish(run.run_id);
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

void trainSpread(store::Database& db, const config::ExperimentSpec& spec,
                 const run::CancelToken& cancel, const ExperimentHooks& hooks,
                 const TrainOptions& options, int gpus, ExperimentResult& result) {
    SideBySide places;
    places.gpus = gpus;
    places.runs_per_gpu = spec.runs_per_gpu;
    places.ranks = [&spec](const PlannedRun& run) {
        return spec.arms.at(static_cast<size_t>(run.arm_index)).ranks;
    };
    trainSideBySide(
        db, cancel, hooks, places,
        [&](const PlannedRun& run, int first_gpu, const run::CancelToken& run_cancel,
            run::TrainObserver* extra, const std::function<bool()>& shared_device) {
            auto connection = store::Database::open(db.path());  // a connection per thread
            TrainOptions o = options;
            o.ranks.first_gpu = first_gpu;
            o.shared_device = shared_device;
            return executeRun(*connection, spec, run, run_cancel, extra, o);
        },
        result);
}

}  // namespace ampbench::train
