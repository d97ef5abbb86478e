// trainRun: one planned run from set-up to its end, a failure caught at the boundary
// and every completed step reported.
#include "core/train/Trainer.h"

#include <memory>

#include "core/parallel/RankSummary.h"
#include "core/train/Experiment.h"
#include "core/train/private/RunLoop.h"
#include "core/train/private/StepGraph.h"

namespace ampbench::train {

using namespace run;  // the records a run emits

RunOutcome trainRun(const config::ExperimentSpec& spec, int arm_index, uint64_t seed,
                    TrainObserver& observer, const CancelToken& cancel,
                    const TrainOptions& options) {
    return trainRun(spec, planRun(spec, arm_index, seed, chooseDevice(spec.device)), observer,
                    cancel, options);
}

RunOutcome trainRun(const config::ExperimentSpec& spec, const RunPlan& plan,
                    TrainObserver& observer, const CancelToken& cancel,
                    const TrainOptions& options) {
    const int arm_index = plan.arm_index;
    RunOutcome out;
    std::unique_ptr<parallel::RankSummaryObserver> ranked;
    std::unique_ptr<ObserverFanout> fanout;
    std::unique_ptr<RunLoop> loop;
    auto fail = [&](EventKind kind, FailureKind why, const std::string& message) {
        out.status = RunStatus::Failed;
        out.failure = why;
        out.error = message;
        if (loop) {
            loop->announceFailure(message);
            loop->salvage();
            out.steps_done = loop->stepsDone();
        }
        try {
            observer.onEvent({out.steps_done, kind, message, 0.0});
        } catch (...) {
        }
    };
    const auto t0 = Clock::now();
    const StepGraph::SharedUse using_the_gpu;  // from set-up to the memory given back
    try {
        if (arm_index < 0 || arm_index >= static_cast<int>(spec.arms.size())) {
            throw RunFailure("arm index " + std::to_string(arm_index) + " is out of range");
        }
        if (options.ranks.active()) {  // this rank's own summary beside the records
            ranked = std::make_unique<parallel::RankSummaryObserver>(options.ranks.rank);
            fanout = std::make_unique<ObserverFanout>(
                std::vector<TrainObserver*>{&observer, ranked.get()});
        }
        if (!plan.device.problem.empty()) {
            throw RunFailure(plan.device.problem);
        }
        loop = std::make_unique<RunLoop>(spec, plan, fanout ? *fanout : observer, cancel, options,
                                         ranked.get());
        out = loop->run();
    } catch (...) {
        const FailureOf f = currentFailure();
        fail(f.event, f.kind, f.message);
    }
    out.wall_s = secondsSince(t0);
    loop.reset();  // frees the model and optimizer before the next run starts
    if (arm_index >= 0 && arm_index < static_cast<int>(spec.arms.size()) &&
        spec.arms[static_cast<size_t>(arm_index)].cuda_graph) {
        StepGraph::releasePools();  // else each graph run's pool stays reserved
    }
    try {
        observer.onFinish(out);
    } catch (const std::exception& e) {
        out.status = RunStatus::Failed;
        out.failure = FailureKind::Recording;
        out.record_error = e.what();
        out.error = std::string("could not record the end of the run: ") + e.what();
    }
    return out;
}

}  // namespace ampbench::train
