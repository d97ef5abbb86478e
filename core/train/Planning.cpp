// Planning one run: the device chosen once (DeviceChoice), a run's plan (RunPlan),
// its optimizer steps, the training set's size and the CPU's threads.
#include "core/train/Trainer.h"

#include <ATen/Parallel.h>

#include <algorithm>
#include <stdexcept>
#include <thread>

#include "core/config/PlannedArm.h"
#include "core/data/Datasets.h"
#include "core/probe/Environment.h"

namespace ampbench::train {

void applyCpuThreads(int cpu_threads) {
    // 0 = every logical CPU: LibTorch's own default can be a single thread.
    const int threads =
        cpu_threads > 0 ? cpu_threads : static_cast<int>(std::thread::hardware_concurrency());
    if (threads > 0 && threads != at::get_num_threads()) {
        at::set_num_threads(threads);
    }
}

DeviceChoice chooseDevice(config::DeviceKind kind) {
    DeviceChoice d;
    switch (kind) {
        case config::DeviceKind::Cpu:
            break;
        case config::DeviceKind::Cuda:
            d.placement = config::Placement::cuda();
            if (!probe::cudaAvailable()) {
#ifdef AMPBENCH_WITH_CUDA
                d.problem = "device 'cuda' was asked for but no CUDA device is visible";
#else
                d.problem =
                    "device 'cuda' was asked for but this build has no CUDA (LibTorch is "
                    "CPU-only)";
#endif
            }
            break;
        case config::DeviceKind::Auto:
            if (probe::cudaAvailable()) {
                d.placement = config::Placement::cuda();
            }
            break;
    }
    return d;
}

std::string resolveDevice(config::DeviceKind kind) {
    const DeviceChoice d = chooseDevice(kind);
    if (!d.problem.empty()) {
        throw std::runtime_error(d.problem);
    }
    return d.placement.str();
}

RunPlan planRun(const config::ExperimentSpec& spec, int arm_index, uint64_t seed,
                const DeviceChoice& device) {
    RunPlan p;
    p.arm_index = arm_index;
    p.seed = seed;
    p.device = device;
    if (arm_index >= 0 && arm_index < static_cast<int>(spec.arms.size())) {
        p.planned = config::planArm(spec, spec.arms[static_cast<size_t>(arm_index)],
                                    device.placement.isCuda());
    }
    return p;
}

int64_t plannedOptimizerSteps(const config::ExperimentSpec& spec, const config::ArmSpec& arm,
                              int64_t train_size) {
    int64_t micro = config::armMicroSteps(spec, arm);
    if (spec.epochs > 0) {
        // An epoch is a pass of the global batch: micro-batch × ranks per micro-step.
        micro = spec.epochs *
                std::max<int64_t>(1, train_size / (int64_t{config::microBatchOf(spec, arm)} *
                                                   std::max(1, arm.ranks)));
    }
    return micro / std::max(1, arm.accumulation);
}

int64_t trainingSetSize(const config::DataSpec& data) {
    return data::openDataset(data)->trainSize();
}

}  // namespace ampbench::train
