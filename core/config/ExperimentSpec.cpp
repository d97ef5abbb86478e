#include "core/config/ExperimentSpec.h"

#include <algorithm>
#include <cmath>

#include "core/config/SpecFields.h"

namespace ampbench::config {

// Equality and names come from the field and enum tables (SpecFields.cpp), so a
// field cannot be left out of a comparison.
bool ScalerSpec::operator==(const ScalerSpec& o) const {
    return equalFields(*this, o);
}
bool ArmSpec::operator==(const ArmSpec& o) const {
    return equalFields(*this, o);
}
bool ModelSpec::operator==(const ModelSpec& o) const {
    return equalFields(*this, o);
}
bool DataSpec::operator==(const DataSpec& o) const {
    return equalFields(*this, o);
}
bool OptimizerSpec::operator==(const OptimizerSpec& o) const {
    return equalFields(*this, o);
}
bool ExperimentSpec::operator==(const ExperimentSpec& o) const {
    return equalFields(*this, o);
}

std::string toString(Precision p) {
    return enumToString(p);
}
std::string toString(Fp8Recipe r) {
    return enumToString(r);
}
std::string toString(LrRule r) {
    return enumToString(r);
}
std::string toString(OptimizerKind k) {
    return enumToString(k);
}
std::string toString(DeviceKind d) {
    return enumToString(d);
}
std::string toString(Task t) {
    return enumToString(t);
}
std::string toString(LrSchedule s) {
    return enumToString(s);
}
std::optional<Task> taskFromString(const std::string& text) {
    return enumFromString<Task>(text);
}
bool fileData(const DataSpec& data) {
    return data.name == "arrays" || data.name == "image-folder" || data.name == "csv";
}
std::string describeWorkload(const ExperimentSpec& s) {
    std::string model = s.model.name == "torchscript"
                            ? "model file " + s.model.file
                            : "built-in " + s.model.name + " (width " +
                                  std::to_string(s.model.width) + ", depth " +
                                  std::to_string(s.model.depth) + ")";
    if (s.model.task != Task::Auto) {
        model += ", task " + toString(s.model.task);
    }
    std::string data = s.data.name;
    if (fileData(s.data)) {
        data += " " + s.data.path;
        if (!s.data.labels.empty()) {
            data += " with labels " + s.data.labels;
        }
        data += s.data.val_path.empty() ? "" : ", validation " + s.data.val_path;
    } else if (s.data.name == "fashion-mnist" && !s.data.dir.empty()) {
        data += " from " + s.data.dir;
    }
    return model + " on " + data;
}

std::optional<Precision> precisionFromString(const std::string& text) {
    return enumFromString<Precision>(text);
}
std::optional<LrRule> lrRuleFromString(const std::string& text) {
    return enumFromString<LrRule>(text);
}
std::optional<OptimizerKind> optimizerFromString(const std::string& text) {
    return enumFromString<OptimizerKind>(text);
}
std::optional<DeviceKind> deviceFromString(const std::string& text) {
    return enumFromString<DeviceKind>(text);
}

namespace {

/// A switch as given, or `automatic` where it is auto.
bool resolved(Switch s, bool automatic) {
    return s == Switch::Auto ? automatic : s == Switch::On;
}

}  // namespace

bool cudnnBenchmark(const ExperimentSpec& spec) {
    return resolved(spec.cudnn_benchmark, !spec.fast_verdict);
}

std::string cudnnBenchmarkText(const ExperimentSpec& spec) {
    const std::string state = cudnnBenchmark(spec) ? "on" : "off";
    if (spec.deterministic) {
        return "off (deterministic kernels)";
    }
    if (spec.cudnn_benchmark != Switch::Auto) {
        return state + " (as the spec says)";
    }
    return state + (spec.fast_verdict ? " (auto under the fast verdict: PyTorch's default; "
                                        "cudnn_benchmark true tunes)"
                                      : " (auto)");
}

bool fuseSeeds(const ExperimentSpec& spec) {
    return resolved(spec.fuse_seeds, spec.fast_verdict);
}

std::vector<uint64_t> seedsForArm(const ExperimentSpec& spec, const ArmSpec& arm) {
    std::vector<uint64_t> seeds = spec.seeds;
    if (arm.repeats > 0) {
        const auto count = static_cast<size_t>(arm.repeats);
        seeds.resize(std::min(count, spec.seeds.size()));
        uint64_t next =
            spec.seeds.empty() ? 1 : *std::max_element(spec.seeds.begin(), spec.seeds.end()) + 1;
        while (seeds.size() < count) {
            seeds.push_back(next++);
        }
    }
    for (auto& seed : seeds) {
        seed += static_cast<uint64_t>(std::max(0, arm.seed_offset));
    }
    return seeds;
}

int microBatchOf(const ExperimentSpec& spec, const ArmSpec& arm) {
    return arm.micro_batch > 0 ? arm.micro_batch : spec.micro_batch;
}

int64_t armMicroSteps(const ExperimentSpec& spec, const ArmSpec& arm) {
    const int own = microBatchOf(spec, arm);
    if (own == spec.micro_batch || own <= 0 || spec.micro_batch <= 0) {
        return spec.micro_steps;
    }
    const int64_t samples = spec.micro_steps * static_cast<int64_t>(spec.micro_batch);
    return std::max<int64_t>(1, (samples + own - 1) / own);
}

double scaledLearningRate(const ExperimentSpec& spec, const ArmSpec& arm) {
    // The rule follows the global effective batch (micro-batch × K × ranks) against the
    // experiment's micro-batch, the batch optimizer.lr was chosen for.
    const double batch = spec.micro_batch > 0 ? static_cast<double>(microBatchOf(spec, arm)) /
                                                    static_cast<double>(spec.micro_batch)
                                              : 1.0;
    const double k = batch * static_cast<double>(std::max(1, arm.accumulation)) *
                     static_cast<double>(std::max(1, arm.ranks));
    switch (arm.lr_rule) {
        case LrRule::Linear:
            return spec.optimizer.lr * k;
        case LrRule::Sqrt:
            return spec.optimizer.lr * std::sqrt(k);
        case LrRule::None:
            return spec.optimizer.lr;
    }
    return spec.optimizer.lr;
}

}  // namespace ampbench::config
