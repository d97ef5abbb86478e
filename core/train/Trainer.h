#pragma once
// The training loop for every arm. No LibTorch in this header: the GUI's worker
// and the CLI call it without Torch's headers.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/config/ExperimentSpec.h"
#include "core/config/Placement.h"
#include "core/config/PlannedArm.h"
#include "core/parallel/RankSetup.h"
#include "core/run/TrainObserver.h"

namespace ampbench::train {

/// Host time in milliseconds that a run spent on its per-step recording. On a
/// launch-bound model the host is the critical path and this is what recording adds
/// to the run, measured where a wall-clock A/B is too noisy to resolve it. On a
/// device-bound model `readback_ms` is mostly waiting for the device's own work.
struct RecordingCost {
    double timers_ms = 0;     ///< step timers: start, stop, and reading them back
    double memory_ms = 0;     ///< the memory probe, once per step
    double grad_norm_ms = 0;  ///< per-gradient norms at the step, global norms at read-back
    double readback_ms = 0;   ///< waiting for the device; copying losses and scales back
    double observer_ms = 0;   ///< the observer's onStep and step events (the store)
    double total() const {
        return timers_ms + memory_ms + grad_norm_ms + readback_ms + observer_ms;
    }
};

struct TrainOptions {
    /// Optimizer steps between reading losses, norms and timings back from the
    /// device: one synchronisation per batch of steps, not per step...
    int flush_every = 20;
    /// ...and no sooner than this many milliseconds after the last read-back, so
    /// millisecond steps are read back in batches of about 100 ms (at most
    /// kMaxPendingSteps). 0: every `flush_every` steps.
    double flush_min_interval_ms = 100;
    /// Step timers, memory probes and gradient norms. Off only to measure their cost.
    bool instrument = true;
    /// The gradient norm's share of step time, measured on the host over the first
    /// steps, above which it is thinned out: recorded every k-th optimizer step,
    /// with k chosen to bring it to `grad_norm_budget`, and an Info event says so.
    /// Steps without it record NaN. This happens on launch-bound models (every
    /// LibTorch call costs host time and the host is the critical path). Where the
    /// device sets the pace (it lags the host during those steps) the norm's host
    /// time is hidden and it stays on every step. 0: every step, whatever it costs.
    double grad_norm_limit = 0.01;
    double grad_norm_budget = 0.002;
    /// When set, receives every model parameter, flattened in order, at the end
    /// of the run (for equivalence tests and checks).
    std::vector<double>* parameters_out = nullptr;
    /// Where a model loaded from a TorchScript file is saved, trained, when the run
    /// ends without a cancel; empty = not saved.
    std::string save_model_to;
    /// Called on the training thread before each micro-batch with its 1-based
    /// count; the cancel token is checked right after it.
    std::function<void(int64_t)> before_micro_batch;
    /// Evaluate at the last step (capacity trials turn it off).
    bool final_eval = true;
    /// When set, receives the host time the run spent on its recording, by part.
    RecordingCost* recording_cost = nullptr;
    /// A data-parallel run (the arm's `ranks`): this process's rank, the world and
    /// the rendezvous. Rank 0 reports to the observer as any run does; the others
    /// train their shard and publish a summary that rank 0 records as an event.
    parallel::RankSetup ranks;
    /// Asked at the end of the run: whether another run held its GPU meanwhile
    /// (runs spread over GPUs, several per GPU); the run then says so in a warning.
    std::function<bool()> shared_device;
    /// Events the run records first, right after it starts (step 0): what was
    /// measured for its arm before it (an arm timed alone, spec fast_verdict).
    std::function<std::vector<run::EventRecord>(int arm_index, uint64_t seed)> opening_events;
};

/// The spec's device on this machine, worked out once per plan. Never throws: where
/// CUDA is asked for and there is none, `problem` says so (each run then fails with it)
/// and the placement is CUDA as asked.
struct DeviceChoice {
    config::Placement placement;
    std::string problem;
};
DeviceChoice chooseDevice(config::DeviceKind kind);

/// One run as planning resolved it: the arm and what it resolves to on the device (the
/// precision, the learning rate after its rule, the effective batch), its seed and
/// where it trains. Below planning nothing of it is worked out again.
struct RunPlan {
    int arm_index = 0;
    uint64_t seed = 0;
    config::PlannedArm planned;
    DeviceChoice device;
};
/// Run `arm_index` × `seed` of `spec` planned on `device`.
RunPlan planRun(const config::ExperimentSpec& spec, int arm_index, uint64_t seed,
                const DeviceChoice& device);

/// Trains one planned run and reports every step, evaluation and event to `observer`.
/// Never throws: a failure (a device planning found missing, bad spec for this device,
/// out of memory, NaN loss, bad data, an observer that throws) ends the run with status
/// Failed and the error text; a cancel ends it with status Cancelled. Every step that
/// completed before the end has been reported.
run::RunOutcome trainRun(const config::ExperimentSpec& spec, const RunPlan& plan,
                         run::TrainObserver& observer, const run::CancelToken& cancel,
                         const TrainOptions& options = {});

/// The same for arm `arm_index` with `seed`, planned here on the spec's device: for
/// what trains outside an experiment (a pass alone, a capacity trial, a rank).
/// Trains one arm with one seed and reports every step, evaluation and event to
/// `observer`. Never throws: a failure (bad spec for this device, out of memory,
/// NaN loss, bad data, an observer that throws) ends the run with status Failed
/// and the error text; a cancel ends it with status Cancelled. Every step that
/// completed before the end has been reported.
run::RunOutcome trainRun(const config::ExperimentSpec& spec, int arm_index, uint64_t seed,
                         run::TrainObserver& observer, const run::CancelToken& cancel,
                         const TrainOptions& options = {});

/// "cpu" or "cuda:0" for a device choice; throws std::runtime_error when CUDA is
/// asked for and this build or machine has none (chooseDevice's problem).
std::string resolveDevice(config::DeviceKind kind);
using config::resolvePrecision;  // amp → amp-fp16 on CUDA, amp-bf16 on CPU
/// Optimizer steps an arm makes (micro-batches / K); `train_size` matters only for epochs.
/// LibTorch's intra-op threads for `cpu_threads` (0 = every logical CPU), set before
/// the first op of a run, so its thread pool starts at that size.
void applyCpuThreads(int cpu_threads);

int64_t plannedOptimizerSteps(const config::ExperimentSpec& spec, const config::ArmSpec& arm,
                              int64_t train_size);
/// Training-part size of the spec's dataset (reads Fashion-MNIST once per process).
int64_t trainingSetSize(const config::DataSpec& data);

}  // namespace ampbench::train
