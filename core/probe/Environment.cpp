#include "core/probe/Environment.h"

#include <ATen/Context.h>
#include <ATen/Parallel.h>
#include <sys/utsname.h>
#include <torch/version.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "core/config/BuildInfo.h"
#include "core/config/Placement.h"
#include "core/probe/MemoryProbe.h"

#ifdef AMPBENCH_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <cuda_runtime_api.h>
#endif

namespace ampbench::probe {
namespace {

std::string cpuModel() {
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("model name", 0) == 0) {
            auto pos = line.find(':');
            if (pos != std::string::npos) {
                auto v = line.substr(pos + 1);
                v.erase(0, v.find_first_not_of(' '));
                return v;
            }
        }
    }
    return "unknown CPU";
}

std::string versionText(int v, int major_div, int minor_div) {
    return std::to_string(v / major_div) + "." + std::to_string((v % major_div) / minor_div);
}

}  // namespace

bool cudaAvailable() {
#ifdef AMPBENCH_WITH_CUDA
    return at::hasCUDA() && at::getNumGPUs() > 0;
#else
    return false;
#endif
}

Environment probeEnvironment(const std::string& device) {
    Environment e;
    e.device = device;
    e.libtorch_version = TORCH_VERSION;
    e.cpu_model = cpuModel();
    e.cpu_threads = at::get_num_threads();
    e.cpu_cores = static_cast<int>(std::thread::hardware_concurrency());
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    e.hostname = host;
    struct utsname u {};
    if (uname(&u) == 0) {
        e.os = std::string(u.sysname) + " " + u.release + " " + u.machine;
    }
    e.ampbench_version = config::buildVersion();
    e.ampbench_commit = config::buildCommit();
    e.device_name = e.cpu_model;
    e.device_memory = physicalMemoryBytes();
#ifdef AMPBENCH_WITH_CUDA
    if (const auto where = config::Placement::parse(device); where.isCuda() && cudaAvailable()) {
        const cudaDeviceProp* prop = at::cuda::getDeviceProperties(where.gpu);
        e.device_name = prop->name;
        e.compute_capability = std::to_string(prop->major) + "." + std::to_string(prop->minor);
        e.device_memory = static_cast<int64_t>(prop->totalGlobalMem);
        int drv = 0, rt = 0;
        cudaDriverGetVersion(&drv);
        cudaRuntimeGetVersion(&rt);
        e.driver_version = versionText(drv, 1000, 10);
        e.cuda_version = versionText(rt, 1000, 10);
        if (at::globalContext().hasCuDNN()) {
            long v = at::globalContext().versionCuDNN();
            e.cudnn_version = std::to_string(v / 10000) + "." + std::to_string((v % 10000) / 100) +
                              "." + std::to_string(v % 100);
        }
        e.tf32_matmul = at::globalContext().allowTF32CuBLAS();
        e.tf32_cudnn = at::globalContext().allowTF32CuDNN();
        e.cudnn_benchmark = at::globalContext().benchmarkCuDNN();
    }
#endif
    return e;
}

std::string toJson(const Environment& e) {
    nlohmann::json j = {
        {"device", e.device},
        {"device_name", e.device_name},
        {"compute_capability", e.compute_capability},
        {"device_memory", e.device_memory},
        {"driver_version", e.driver_version},
        {"cuda_version", e.cuda_version},
        {"cudnn_version", e.cudnn_version},
        {"libtorch_version", e.libtorch_version},
        {"cpu_model", e.cpu_model},
        {"cpu_threads", e.cpu_threads},
        {"cpu_cores", e.cpu_cores},
        {"hostname", e.hostname},
        {"os", e.os},
        {"ampbench_version", e.ampbench_version},
        {"ampbench_commit", e.ampbench_commit},
        {"tf32_matmul", e.tf32_matmul},
        {"tf32_cudnn", e.tf32_cudnn},
        {"cudnn_benchmark", e.cudnn_benchmark},
    };
    if (!e.memory.empty()) {
        j["memory"] = e.memory;
    }
    if (e.world_size > 1) {  // a data-parallel run: its ranks and their backend
        j["world_size"] = e.world_size;
        j["dist_backend"] = e.dist_backend;
    }
    // A host or CPU name is bytes from the system, not always UTF-8.
    return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Environment environmentFromJson(const std::string& text) {
    Environment e;
    auto j = nlohmann::json::parse(text, nullptr, false);
    if (!j.is_object()) {
        return e;
    }
    auto get = [&](const char* key, auto& field) {
        if (auto it = j.find(key); it != j.end() && !it->is_null()) {
            try {
                it->get_to(field);
            } catch (const nlohmann::json::exception&) {
            }
        }
    };
    get("device", e.device);
    get("device_name", e.device_name);
    get("compute_capability", e.compute_capability);
    get("device_memory", e.device_memory);
    get("driver_version", e.driver_version);
    get("cuda_version", e.cuda_version);
    get("cudnn_version", e.cudnn_version);
    get("libtorch_version", e.libtorch_version);
    get("cpu_model", e.cpu_model);
    get("cpu_threads", e.cpu_threads);
    get("cpu_cores", e.cpu_cores);
    get("hostname", e.hostname);
    get("os", e.os);
    get("ampbench_version", e.ampbench_version);
    get("ampbench_commit", e.ampbench_commit);
    get("tf32_matmul", e.tf32_matmul);
    get("tf32_cudnn", e.tf32_cudnn);
    get("cudnn_benchmark", e.cudnn_benchmark);
    get("memory", e.memory);
    get("world_size", e.world_size);
    get("dist_backend", e.dist_backend);
    return e;
}

std::string describe(const Environment& e) {
    if (config::onCuda(e.device)) {
        return e.device_name + " (cc " + e.compute_capability + "), driver " + e.driver_version +
               ", CUDA " + e.cuda_version + ", cuDNN " + e.cudnn_version + ", LibTorch " +
               e.libtorch_version;
    }
    return "CPU " + e.cpu_model + ", " + std::to_string(e.cpu_threads) + " threads, LibTorch " +
           e.libtorch_version;
}

}  // namespace ampbench::probe

namespace ampbench::probe {

std::vector<std::string> environmentDifferences(const Environment& then, const Environment& now) {
    std::vector<std::string> out;
    auto compare = [&](const char* what, const std::string& a, const std::string& b) {
        if (a != b) {
            out.push_back(std::string(what) + ": " + (a.empty() ? "(not recorded)" : a) +
                          " then, " + (b.empty() ? "(none)" : b) + " now");
        }
    };
    compare("device", then.device, now.device);
    compare("device model", then.device_name, now.device_name);
    compare("compute capability", then.compute_capability, now.compute_capability);
    compare("CUDA driver", then.driver_version, now.driver_version);
    compare("CUDA runtime", then.cuda_version, now.cuda_version);
    compare("cuDNN", then.cudnn_version, now.cudnn_version);
    compare("LibTorch", then.libtorch_version, now.libtorch_version);
    compare("ampbench version", then.ampbench_version, now.ampbench_version);
    compare("ampbench commit", then.ampbench_commit, now.ampbench_commit);
    if (!config::onCuda(then.device)) {
        // On the CPU the model and the thread count decide how reductions are split.
        compare("CPU model", then.cpu_model, now.cpu_model);
        compare("CPU threads", std::to_string(then.cpu_threads), std::to_string(now.cpu_threads));
    }
    return out;
}

}  // namespace ampbench::probe
