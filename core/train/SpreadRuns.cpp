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

#include "core/parallel/Communicator.h"
#include "core/train/GpuScheduler.h"

namespace ampbench::train {
namespace {

/// A front end's observer heard by runs training at once: one call at a time (the
/// front end's progress display is written for one run at a time).
class SerialObserver : public run::TrainObserver {
  public:
    SerialObserver(run::TrainObserver& target, std::mutex& mutex)
        : target_(target), mutex_(mutex) {}
    void onStart(const run::RunInfo& i) override {
        locked([&] { target_.onStart(i); });
    }
    void onStep(const run::StepRecord& s) override {
        locked([&] { target_.onStep(s); });
    }
    void onEval(const run::EvalRecord& e) override {
        locked([&] { target_.onEval(e); });
    }
    void onEvent(const run::EventRecord& e) override {
        locked([&] { target_.onEvent(e); });
    }
    void onNumerics(const std::vector<run::NumericsRecord>& rows) override {
        locked([&] { target_.onNumerics(rows); });
    }
    void onFinish(const run::RunOutcome& o) override {
        locked([&] { target_.onFinish(o); });
    }

  private:
    template <class F>
    void locked(F f) {
        std::lock_guard<std::mutex> lock(mutex_);
        f();
    }
    run::TrainObserver& target_;
    std::mutex& mutex_;
};

}  // namespace

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
            extra = hooks.starting ? hooks.starting(run) : nullptr;
        }
        threads.emplace_back([&, run, extra, gpu = *first] {
            std::optional<SerialObserver> serial;
            if (extra) {
                serial.emplace(*extra, observers);
            }
            try {
                auto own = store::Database::open(db.path());  // a connection per thread
                TrainOptions o = options;
                o.ranks.first_gpu = gpu;
                o.shared_device = [&scheduler, &mutex, id = run.run_id] {
                    std::lock_guard<std::mutex> lock(mutex);
                    return scheduler.shared(id);
                };
                const run::RunOutcome out =
                    executeRun(*own, spec, run, cancel, serial ? &*serial : nullptr, o);
                std::lock_guard<std::mutex> lock(mutex);
                result.any_failed = result.any_failed || out.status == run::RunStatus::Failed;
                if (hooks.finished) {
                    hooks.finished(run, out);
                }
                result.cancelled = result.cancelled || out.status == run::RunStatus::Cancelled;
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
