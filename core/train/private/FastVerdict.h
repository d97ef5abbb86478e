#pragma once
// The fast verdict (spec fast_verdict): each arm timed alone on the GPU, then the
// runs trained packed, in CUDA-graph mode where an arm can be captured. The
// convergence question needs every run; the speed and memory questions need each
// arm measured with the GPU to itself, which runs sharing it cannot give.
#include <functional>
#include <limits>
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

/// How many steps a pass warms up before it times (its warm-up covers the eager steps
/// before a graph is captured).
int64_t passWarmup(const config::ExperimentSpec& spec);
/// `spec` cut to a pass of arm `arm_index`: warm-up and `timed` optimizer steps, no
/// evaluation, no numerics, in graph mode or not.
config::ExperimentSpec passSpec(const config::ExperimentSpec& spec, int arm_index, bool graph,
                                int64_t timed = kAloneTimedSteps);
/// `options` for a pass: no final evaluation, nothing saved, no opening events.
TrainOptions passOptions(const TrainOptions& options);

/// Each arm that trains on one GPU, alone on the device: a short pass in eager mode
/// and, where this build captures graphs, one in graph mode. `note` hears what is
/// timed and what came of it. Every pass trains on `device`, the experiment's. Stops early
/// (returning what it has) on a cancel.
std::vector<AlonePass> timeArmsAlone(const config::ExperimentSpec& spec, const DeviceChoice& device,
                                     const run::CancelToken& cancel, const TrainOptions& options,
                                     const std::function<void(const std::string&)>& note);

/// How one arm's runs shared the GPU in a pass: its seeds fused into one model
/// (`members` of them, 1: a plain run), `copies` such units side by side. The rate
/// counts every member of every copy.
struct SharingPass {
    int arm_index = 0;
    int members = 1;
    int copies = 1;
    double samples_per_s = std::numeric_limits<double>::quiet_NaN();
    int64_t peak_reserved = 0;  ///< bytes the allocator held at most, for the whole pass
    bool ok = false;
    std::string error;
    double wall_s = 0;
};

/// The gain over the same work done one unit at a time at or above which the fast
/// verdict fuses seeds, or packs units side by side: below it the GPU is as good as
/// full, and the runs' set-up and memory are not worth the sharing.
inline constexpr double kSharingPays = 1.25;
/// Units side by side that gain less than this pack no more at a time than were measured.
inline constexpr double kPackingPaysWide = 1.6;

/// How the fast verdict's runs share the GPU, chosen from the passes, and why.
struct SharingChoice {
    bool fuse = false;     ///< each arm's seeds as one fused model, where it can
    std::string fuse_why;  ///< empty: nothing was measured to say
    int per_gpu = 1;       ///< units (a run, or an arm's fused seeds) at a time per GPU
    std::string pack_why;  ///< empty: as many as the runs and the GPUs give
};

/// After timeArmsAlone, on a CUDA device: each arm whose seeds can fuse, fused, in
/// the mode it will train in (unless fuse_seeds is false); the heaviest arm's plain
/// runs side by side on streams (as many as its seeds where they fuse, else two); and,
/// where fusion is chosen, two of the heaviest arm's fused units side by side.
std::vector<SharingPass> timeSharing(const config::ExperimentSpec& spec, const DeviceChoice& device,
                                     const std::vector<AlonePass>& alone,
                                     const run::CancelToken& cancel, const TrainOptions& options,
                                     const std::function<void(const std::string&)>& note);

/// Fusion and packing from the passes: fuse where the fused passes gained at least
/// kSharingPays over one run's samples/s and more than the same runs side by side on
/// streams (fuse_seeds auto; true or false as given); pack as many units as the GPUs,
/// the spec's runs_per_gpu and 85 % of `device_bytes` allow where the units side by
/// side gained kPackingPaysWide, as many as were measured side by side where they
/// gained kSharingPays, else one at a time. Without such a pass, as many as fit.
SharingChoice chooseSharing(const config::ExperimentSpec& spec, const std::vector<AlonePass>& alone,
                            const std::vector<SharingPass>& sharing, int gpus,
                            int64_t device_bytes);

/// The spec the fast verdict's runs train with: arms whose graph pass was captured
/// get cuda_graph, fuse_seeds and runs_per_gpu as chooseSharing says. `note` says
/// so, with the reasons and the time the passes took.
config::ExperimentSpec fastVerdictSpec(const config::ExperimentSpec& spec,
                                       const std::vector<AlonePass>& passes,
                                       const std::vector<SharingPass>& sharing, int gpus,
                                       const std::function<void(const std::string&)>& note);

/// The events a run of arm `arm_index` and seed `seed` opens with: the arm's passes
/// (on the arm's first seed only) and an Info line saying how the run trains.
std::vector<run::EventRecord> fastVerdictEvents(const config::ExperimentSpec& spec,
                                                const std::vector<AlonePass>& passes, int arm_index,
                                                uint64_t seed);

}  // namespace ampbench::train
