// `ampbench-cli host`: what this machine offers remote runs (version, devices, each
// scheduler's client tools, a data folder), for a desktop's Test connection.
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli/Commands.h"
#include "cli/ExitCodes.h"
#include "cli/Terminal.h"
#include "core/analysis/Format.h"
#include "core/config/BuildInfo.h"
#include "core/launch/Program.h"
#include "core/launch/Scheduler.h"
#include "core/probe/Environment.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace ampbench::cli {

int commandHost(const std::string& data_dir, bool as_json) {
    json out = {{"version", config::buildVersion()}, {"commit", config::buildCommit()}};
    const probe::Environment cpu = probe::probeEnvironment("cpu");
    out["libtorch"] = cpu.libtorch_version;
    out["cpu"] = {
        {"name", cpu.device_name}, {"memory", cpu.device_memory}, {"cores", cpu.cpu_cores}};
    out["cuda"] = json::array();
    if (probe::cudaAvailable()) {
        const probe::Environment gpu = probe::probeEnvironment("cuda");
        out["cuda"].push_back({{"name", gpu.device_name},
                               {"memory", gpu.device_memory},
                               {"compute_capability", gpu.compute_capability},
                               {"driver", gpu.driver_version}});
    }
    // What `launch --<scheduler>` would find on this PATH (a desktop's Test connection
    // of a cluster's login host names the missing ones): each tool's path, empty when
    // absent, by scheduler; Slurm's also as "slurm_tools", where desktops before the
    // others read them.
    json schedulers = json::object();
    for (const launch::Scheduler* s : launch::schedulers()) {
        json tools = json::object();
        for (const auto& tool : s->info().tools) {
            tools[tool] = launch::findProgram(tool);
        }
        schedulers[s->info().name] = tools;
    }
    out["scheduler_tools"] = schedulers;
    out["slurm_tools"] = schedulers.value("slurm", json::object());
    const char* path_env = std::getenv("PATH");
    out["path"] = path_env ? path_env : "";
    if (!data_dir.empty()) {
        std::error_code ec;
        json d = {{"path", data_dir}, {"exists", fs::is_directory(data_dir, ec)}};
        json entries = json::array();
        for (const auto& e : fs::directory_iterator(data_dir, ec)) {
            if (entries.size() < 50) {
                entries.push_back(e.path().filename().string());
            }
        }
        d["entries"] = entries;
        out["data"] = d;
    }
    if (as_json) {
        printJson(out);
        return kOk;
    }
    say(stdout, "ampbench-cli %s, LibTorch %s\n", config::buildVersion(),
        cpu.libtorch_version.c_str());
    say(stdout, "CPU  %s, %d cores, %s\n", cpu.device_name.c_str(), cpu.cpu_cores,
        analysis::formatBytes(cpu.device_memory).c_str());
    for (const auto& g : out["cuda"]) {
        say(stdout, "CUDA %s, %s\n", g["name"].get<std::string>().c_str(),
            analysis::formatBytes(g["memory"].get<int64_t>()).c_str());
    }
    if (out["cuda"].empty()) {
        say(stdout, "CUDA none visible\n");
    }
    for (const launch::Scheduler* s : launch::schedulers()) {
        std::string found, absent;
        for (const auto& [tool, where] : out["scheduler_tools"][s->info().name].items()) {
            std::string& list = where.get<std::string>().empty() ? absent : found;
            list += (list.empty() ? "" : ", ") + tool;
        }
        say(stdout, "%s %s%s%s\n", s->info().title.c_str(), found.empty() ? "none" : found.c_str(),
            absent.empty() || found.empty() ? "" : "; not on PATH: ",
            absent.empty() || found.empty() ? "" : absent.c_str());
    }
    if (out.contains("data")) {
        say(stdout, "data %s: %s\n", data_dir.c_str(),
            out["data"]["exists"].get<bool>()
                ? (std::to_string(out["data"]["entries"].size()) + " entries").c_str()
                : "missing");
    }
    return kOk;
}

}  // namespace ampbench::cli
