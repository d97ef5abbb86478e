#pragma once
// The fast verdict (spec fast_verdict): each arm timed alone on the GPU, then the
// runs trained packed, in CUDA-graph mode where an arm can be captured. The
// convergence question needs every run; the speed and memory questions need each
// arm measured with the GPU to itself, which runs sharing it cannot give.
#include <functional>
#include <string>
#include <vector>

#include "core/config/ExperimentSpec.h"
#include "core/run/AloneTiming.h"
#include "core/train/Trainer.h"

namespace ampbench::train {

/// Optimizer steps a pass times after its warm-up.
inline constexpr int64_t kAloneTimedSteps = 40;

struct AlonePass {
    int arm_index = 0;
    run::AloneTiming timing;
    bool ok = false;        ///< the pass trained to its end
    bool captured = false;  ///< graph mode: the step was captured (no eager fallback)
    std::string error;      ///< why it did not, when it did not
    double wall_s = 0;      ///< the pass's wall time, its set-up included
};

/// Each arm that trains on one GPU, alone on the device: a short pass in eager mode
/// and, where this build captures graphs, one in graph mode. `note` hears what is
/// timed and what came of it. Stops early (returning what it has) on a cancel.
std::vector<AlonePass> timeArmsAlone(const config::ExperimentSpec& spec,
                                     const run::CancelToken& cancel, const TrainOptions& options,
                                     const std::function<void(const std::string&)>& note);

/// The spec the fast verdict's runs train with: arms whose graph pass was captured
/// get cuda_graph, and runs_per_gpu packs the runs over the GPUs as far as the
/// largest pass's reserved memory lets them (85 % of the device). `note` says so,
/// with the time the passes took.
config::ExperimentSpec fastVerdictSpec(const config::ExperimentSpec& spec,
                                       const std::vector<AlonePass>& passes, int gpus,
                                       const std::function<void(const std::string&)>& note);

/// The events a run of arm `arm_index` and seed `seed` opens with: the arm's passes
/// (on the arm's first seed only) and an Info line saying how the run trains.
std::vector<run::EventRecord> fastVerdictEvents(const config::ExperimentSpec& spec,
                                                const std::vector<AlonePass>& passes, int arm_index,
                                                uint64_t seed);

}  // namespace ampbench::train
