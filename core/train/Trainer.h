#pragma once
// The training loop for every arm. No LibTorch in this header: the GUI's worker
// and the CLI call it without Torch's headers.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/config/ExperimentSpec.h"
#include "core/train/TrainObserver.h"

namespace ampbench::train {

struct TrainOptions {
    /// Optimizer steps between reading losses, norms and timings back from the
    /// device: one synchronisation per batch of steps, not per step.
    int flush_every = 20;
    /// Step timers, memory probes and gradient norms. Off only to measure their cost.
    bool instrument = true;
    /// When set, receives every model parameter, flattened in order, at the end
    /// of the run (for equivalence tests and checks).
    std::vector<double>* parameters_out = nullptr;
    /// Called on the training thread before each micro-batch with its 1-based
    /// count; the cancel token is checked right after it.
    std::function<void(int64_t)> before_micro_batch;
    /// Evaluate at the last step (capacity trials turn it off).
    bool final_eval = true;
};

/// Trains one arm with one seed and reports every step, evaluation and event to
/// `observer`. Never throws: a failure (bad spec for this device, out of memory,
/// NaN loss, bad data, an observer that throws) ends the run with status Failed
/// and the error text; a cancel ends it with status Cancelled. Every step that
/// completed before the end has been reported.
RunOutcome trainRun(const config::ExperimentSpec& spec, int arm_index, uint64_t seed,
                    TrainObserver& observer, const CancelToken& cancel,
                    const TrainOptions& options = {});

/// "cpu" or "cuda:0" for a device choice; throws std::runtime_error when CUDA is
/// asked for and this build or machine has none.
std::string resolveDevice(config::DeviceKind kind);
/// `amp` becomes amp-fp16 on CUDA and amp-bf16 on CPU; others stay.
config::Precision resolvePrecision(config::Precision precision, bool cuda);
/// Optimizer steps an arm makes (micro-batches / K); `train_size` matters only for epochs.
int64_t plannedOptimizerSteps(const config::ExperimentSpec& spec, const config::ArmSpec& arm,
                              int64_t train_size);
/// Training-part size of the spec's dataset (reads Fashion-MNIST once per process).
int64_t trainingSetSize(const config::DataSpec& data);

}  // namespace ampbench::train
