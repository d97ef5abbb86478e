#include "core/train/private/SpreadRuns.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <exception>
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

void trainSpread(store::Database& db, const config::ExperimentSpec& spec,
                 const run::CancelToken& cancel, const ExperimentHooks& hooks,
                 const TrainOptions& options, int gpus, ExperimentResult& result) {
    GpuScheduler scheduler(gpus, spec.runs_per_gpu);
    std::mutex mutex;  // guards scheduler, result, error and the hooks' calls
    std::condition_variable freed;
    std::mutex observers;  // serialises the front end's observers (SerialObserver)
    std::exception_ptr error;
    std::vector<std::thread> threads;
    for (const auto& run : result.plan.runs) {
        const int ranks = spec.arms.at(static_cast<size_t>(run.arm_index)).ranks;
        std::optional<int> first;
        run::TrainObserver* extra = nullptr;
        const run::CancelToken* own = nullptr;  // the run's alone, when the front end gives one
        {
            std::unique_lock<std::mutex> lock(mutex);
            if (ranks > scheduler.gpus()) {  // checkRanks stops this before planning
                error = std::make_exception_ptr(std::runtime_error(
                    "arm '" + run.arm + "' needs " + std::to_string(ranks) + " GPUs, " +
                    std::to_string(scheduler.gpus()) + " are allowed"));
                break;
            }
            while (!cancel.cancelled() && !error && !result.cancelled &&
                   !(first = scheduler.place(run.run_id, ranks))) {
                freed.wait_for(lock, std::chrono::milliseconds(100));  // the cancel is polled
            }
            if (!first) {
                break;
            }
            // Asked when the run's turn comes, as one at a time: a run taken out of
            // the queue while it waited for a GPU never starts.
            if (hooks.skip && hooks.skip(run)) {
                scheduler.finish(run.run_id);
                db.finishRun(run.run_id, run::RunStatus::Cancelled,
                             "removed from the queue before it started",
                             run::FailureKind::Cancelled);
                continue;
            }
            try {  // a hook that throws must not leave the started threads unjoined
                own = hooks.run_cancel ? hooks.run_cancel(run) : nullptr;
                extra = hooks.starting ? hooks.starting(run) : nullptr;
            } catch (...) {
                error = std::current_exception();
                scheduler.finish(run.run_id);
                break;
            }
        }
        threads.emplace_back([&, run, extra, own, gpu = *first] {
#ifdef __linux__
            pthread_setname_np(pthread_self(), "ampbench-run");  // in top -H, gdb, a profiler
#endif
            std::optional<run::SerialObserver> serial;
            if (extra) {
                serial.emplace(*extra, &observers);
            }
            try {
                auto connection = store::Database::open(db.path());  // a connection per thread
                TrainOptions o = options;
                o.ranks.first_gpu = gpu;
                o.shared_device = [&scheduler, &mutex, id = run.run_id] {
                    std::lock_guard<std::mutex> lock(mutex);
                    return scheduler.shared(id);
                };
                const run::RunOutcome out = executeRun(*connection, spec, run, own ? *own : cancel,
                                                       serial ? &*serial : nullptr, o);
                std::lock_guard<std::mutex> lock(mutex);
                result.any_failed = result.any_failed || out.status == run::RunStatus::Failed;
                if (hooks.finished) {
                    hooks.finished(run, out);
                }
                // A run cancelled by its own token ends alone; the others go on.
                result.cancelled = result.cancelled || (out.status == run::RunStatus::Cancelled &&
                                                        (!own || cancel.cancelled()));
                scheduler.finish(run.run_id);
            } catch (...) {
                std::lock_guard<std::mutex> lock(mutex);
                error = error ? error : std::current_exception();
                scheduler.finish(run.run_id);
            }
            freed.notify_all();
        });
    }
    for (auto& t : threads) {
        t.join();
    }
    if (error) {
        std::rethrow_exception(error);
    }
}

}  // namespace ampbench::train
