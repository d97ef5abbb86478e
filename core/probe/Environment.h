#pragma once
#include <string>
#include <vector>

namespace ampbench::probe {

/// The machine and software a run used, recorded with every run.
struct Environment {
    std::string device;              ///< "cpu" or "cuda:0"
    std::string device_name;         ///< GPU name, or the CPU model
    std::string compute_capability;  ///< "9.0"; empty on CPU
    int64_t device_memory = 0;       ///< bytes: GPU memory, or physical RAM
    std::string driver_version;      ///< CUDA driver (e.g. "13.0"); empty on CPU
    std::string cuda_version;        ///< CUDA runtime LibTorch was built with
    std::string cudnn_version;
    std::string libtorch_version;
    std::string cpu_model;
    int cpu_threads = 0;  ///< LibTorch intra-op threads in use
    int cpu_cores = 0;    ///< logical CPUs online
    std::string hostname;
    std::string os;
    std::string ampbench_version;
    std::string ampbench_commit;  ///< git commit of the binary (config::buildCommit)
    bool tf32_matmul = false;     ///< policy in effect for the run
    bool tf32_cudnn = false;
    bool cudnn_benchmark = false;
    int world_size = 1;        ///< data-parallel ranks of the run
    std::string dist_backend;  ///< "gloo" or "nccl" when world_size > 1
    /// What the run's memory figures measure: "allocator" (the CUDA caching allocator),
    /// "tensors" (the run's own CPU tensors) or "resident" (the process's resident set);
    /// empty where the run did not say (runs recorded before, a training script): then
    /// "allocator" on CUDA, "resident" on the CPU (analysis::memoryMeasure).
    std::string memory;
};

/// True when this build has CUDA and a device is visible.
bool cudaAvailable();
/// Probes the environment for "cpu" or "cuda[:N]".
Environment probeEnvironment(const std::string& device);
std::string toJson(const Environment& env);
Environment environmentFromJson(const std::string& json);
/// One line for tables: "NVIDIA H200 (cc 9.0), CUDA 13.0, LibTorch 2.11.0" or "CPU <model>, 2
/// threads".
std::string describe(const Environment& env);
/// What differs between the environment a run used and this one, a line each
/// ("LibTorch: 2.11.0 then, 1.13.1 now"), for what decides the numbers: device and
/// its model, driver, CUDA, cuDNN, LibTorch, the ampbench version and commit, and on
/// the CPU its model and thread count. Host name and OS are left out.
std::vector<std::string> environmentDifferences(const Environment& then, const Environment& now);

}  // namespace ampbench::probe
