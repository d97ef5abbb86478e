// The environment contract of a script run: the AMPBENCH_* variables each planned run
// is started with, the child's environment, the interpreter and command line, and where
// the ampbench Python package is.
#include "core/script/private/ScriptEnvironment.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/config/Placement.h"
#include "core/script/ScriptProcess.h"
#include "core/util/FileKind.h"
#include "core/util/OwnExecutable.h"
#include "core/util/Words.h"

extern char** environ;

namespace ampbench::script {

namespace fs = std::filesystem;

/// The settings of one planned run for the script, as AMPBENCH_* variables.
std::vector<std::pair<std::string, std::string>> armVariables(const config::ExperimentSpec& spec,
                                                              const train::ExperimentPlan& plan,
                                                              const train::PlannedRun& r,
                                                              const config::PlannedArm& planned,
                                                              const std::string& device) {
    const config::ArmSpec& arm = planned.arm;
    const config::Precision precision = planned.resolvedOn(device);
    auto number = [](double v) {
        char buf[40];
        std::snprintf(buf, sizeof buf, "%.17g", v);
        return std::string(buf);
    };
    nlohmann::json scaler = {{"init_scale", arm.scaler.init_scale},
                             {"growth_factor", arm.scaler.growth_factor},
                             {"backoff_factor", arm.scaler.backoff_factor},
                             {"growth_interval", arm.scaler.growth_interval}};
    return {
        {"AMPBENCH_STREAM_FD", std::to_string(kScriptStreamFd)},
        {"AMPBENCH_RUN_ID", std::to_string(r.run_id)},
        {"AMPBENCH_EXPERIMENT_ID", std::to_string(plan.experiment_id)},
        {"AMPBENCH_EXPERIMENT", spec.name},
        {"AMPBENCH_ARM", r.arm},
        {"AMPBENCH_ARM_INDEX", std::to_string(r.arm_index)},
        {"AMPBENCH_SEED", std::to_string(r.seed)},
        {"AMPBENCH_PRECISION", config::toString(precision)},
        {"AMPBENCH_ACCUMULATION", std::to_string(arm.accumulation)},
        {"AMPBENCH_LR",
         number(std::isnan(planned.lr) ? config::scaledLearningRate(spec, arm) : planned.lr)},
        {"AMPBENCH_BASE_LR", number(spec.optimizer.lr)},
        {"AMPBENCH_LR_RULE", config::toString(arm.lr_rule)},
        {"AMPBENCH_MICRO_BATCH", std::to_string(config::microBatchOf(spec, arm))},
        {"AMPBENCH_EFFECTIVE_BATCH", std::to_string(planned.effective_batch)},
        {"AMPBENCH_PLANNED_STEPS", std::to_string(r.planned_steps)},
        {"AMPBENCH_MICRO_STEPS", std::to_string(config::armMicroSteps(spec, arm))},
        {"AMPBENCH_WARMUP_STEPS", std::to_string(spec.warmup_steps)},
        {"AMPBENCH_EVAL_INTERVAL", std::to_string(spec.eval_interval)},
        {"AMPBENCH_DEVICE", device},
        {"AMPBENCH_DATA", spec.data.path},
        {"AMPBENCH_DATA_DIR", spec.data.dir},
        {"AMPBENCH_GRAD_CLIP", number(arm.grad_clip)},
        {"AMPBENCH_LOSS_SCALING", arm.loss_scaling ? "1" : "0"},
        {"AMPBENCH_SCALER", scaler.dump()},
        {"AMPBENCH_ARM_JSON", config::plannedArmToJson(planned)},
    };
}

std::string precisionOf(const std::vector<std::pair<std::string, std::string>>& vars) {
    for (const auto& [k, v] : vars) {
        if (k == "AMPBENCH_PRECISION") {
            return v;
        }
    }
    return {};
}

/// The child's environment: this process's, less any AMPBENCH_* of its own (a stream
/// path set by hand must not take the run's records elsewhere), plus `vars`, the
/// package's folder first on PYTHONPATH and unbuffered output.
std::vector<std::string> childEnvironment(
    const std::vector<std::pair<std::string, std::string>>& vars, const std::string& package) {
    std::vector<std::string> out;
    std::string pythonpath;
    for (char** e = environ; e && *e; ++e) {
        const std::string entry = *e;
        if (entry.rfind("AMPBENCH_", 0) == 0 || entry.rfind("PYTHONUNBUFFERED=", 0) == 0) {
            continue;
        }
        if (entry.rfind("PYTHONPATH=", 0) == 0) {
            pythonpath = entry.substr(11);
            continue;
        }
        out.push_back(entry);
    }
    for (const auto& [k, v] : vars) {
        out.push_back(k + "=" + v);
    }
    if (!package.empty()) {
        pythonpath = pythonpath.empty() ? package : package + ":" + pythonpath;
    }
    if (!pythonpath.empty()) {
        out.push_back("PYTHONPATH=" + pythonpath);
    }
    out.push_back("PYTHONUNBUFFERED=1");
    return out;
}

std::string interpreterFor(const config::ModelSpec& model, const std::string& given) {
    if (!given.empty()) {
        return given;
    }
    if (!model.python.empty()) {
        return model.python;
    }
    const char* env = std::getenv("AMPBENCH_PYTHON");
    return env && *env ? env : "python3";
}

std::vector<std::string> commandLine(const config::ModelSpec& model, const std::string& python) {
    std::string error;
    const auto words = util::splitWords(model.args, error);
    if (!words) {
        throw std::invalid_argument("model.args: " + error);
    }
    std::error_code ec;
    const fs::path script = fs::absolute(model.file, ec);
    std::vector<std::string> argv{python, ec ? model.file : script.string()};
    argv.insert(argv.end(), words->begin(), words->end());
    return argv;
}

std::string scriptFileProblem(const std::string& path) {
    if (path.empty()) {
        return "no script named";
    }
    const util::FileKind kind = util::fileKind(path);
    if (kind == util::FileKind::Missing) {
        return "no such file";
    }
    if (kind != util::FileKind::Regular) {
        return "is " + util::describeFileKind(kind) + ", not a script";
    }
    if (access(path.c_str(), R_OK) != 0) {
        return "cannot be read (permission denied)";
    }
    return {};
}

std::string pythonPackageDir() {
    const fs::path exe = util::ownExecutable();
    if (exe.empty()) {
        return {};
    }
    std::error_code ec;
    const fs::path bin = exe.parent_path();
    // An installed binary: <prefix>/bin next to <prefix>/lib/python3/dist-packages.
    const fs::path installed = bin.parent_path() / "lib" / "python3" / "dist-packages";
    if (fs::exists(installed / "ampbench" / "__init__.py", ec)) {
        return installed.string();
    }
    // A build tree inside a checkout: python/ in a folder above the binary.
    for (fs::path dir = bin; !dir.empty(); dir = dir.parent_path()) {
        if (fs::exists(dir / "python" / "ampbench" / "__init__.py", ec)) {
            return (dir / "python").string();
        }
        if (dir == dir.parent_path()) {
            break;
        }
    }
    return {};
}

}  // namespace ampbench::script
