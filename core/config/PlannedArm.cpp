#include "core/config/PlannedArm.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <vector>

#include "core/config/Placement.h"
#include "core/config/PrecisionFormats.h"
#include "core/config/SpecJson.h"

namespace ampbench::config {
namespace {

using nlohmann::json;

constexpr const char* kPrecisionKey = "resolved_precision";
constexpr const char* kLrKey = "lr";
constexpr const char* kBatchKey = "effective_batch";
constexpr const char* kWorldKey = "world_size";
constexpr const char* kBackendKey = "backend";
constexpr const char* kPassKey = "timing_pass";

}  // namespace

Precision resolvePrecision(Precision precision, bool cuda) {
    const PrecisionFormat& f = formatOf(precision);
    return cuda ? f.on_cuda : f.on_cpu;
}

Precision PlannedArm::resolvedOn(const std::string& device) const {
    return precision ? *precision : resolvePrecision(arm.precision, onCuda(device));
}

PlannedArm planArm(const ExperimentSpec& spec, const ArmSpec& arm, bool cuda) {
    PlannedArm p;
    p.arm = arm;
    p.precision = resolvePrecision(arm.precision, cuda);
    p.lr = scaledLearningRate(spec, arm);
    p.world_size = std::max(1, arm.ranks);
    p.effective_batch =
        static_cast<int64_t>(microBatchOf(spec, arm)) * arm.accumulation * p.world_size;
    if (p.world_size > 1) {
        p.backend = cuda ? "nccl" : "gloo";
    }
    return p;
}

std::string plannedArmToJson(const PlannedArm& planned) {
    json j = toJson(planned.arm);
    if (planned.precision) {
        j[kPrecisionKey] = toString(*planned.precision);
    }
    j[kLrKey] = planned.lr;
    j[kBatchKey] = planned.effective_batch;
    if (planned.world_size > 1) {
        j[kWorldKey] = planned.world_size;
        j[kBackendKey] = planned.backend;
    }
    if (planned.timing_pass) {
        j[kPassKey] = true;
    }
    return j.dump();
}

PlannedArm plannedArmFromJson(const std::string& text) {
    PlannedArm p;
    json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object()) {
        return p;
    }
    auto take = [&j](const char* key) {
        json value;
        if (auto it = j.find(key); it != j.end()) {
            value = *it;
            j.erase(it);
        }
        return value;
    };
    const json precision = take(kPrecisionKey);
    const json lr = take(kLrKey);
    const json batch = take(kBatchKey);
    const json world = take(kWorldKey);
    const json backend = take(kBackendKey);
    const json pass = take(kPassKey);
    p.timing_pass = pass.is_boolean() && pass.get<bool>();
    if (precision.is_string()) {
        p.precision = precisionFromString(precision.get<std::string>());
    }
    if (lr.is_number()) {
        p.lr = lr.get<double>();
    }
    if (batch.is_number_integer()) {
        p.effective_batch = batch.get<int64_t>();
    }
    if (world.is_number_integer()) {
        p.world_size = std::max(1, world.get<int>());
    }
    if (backend.is_string()) {
        p.backend = backend.get<std::string>();
    }
    std::vector<FieldError> ignored;  // a field this build does not know keeps its default
    p.arm = armFromJson(j, "arm", ignored);
    return p;
}

// The check the analysis makes of runs.spec_json (analysis::storedArmProblem) and
// `ingest` of a run record's.
std::string plannedArmProblem(const std::string& text, const std::string& arm) {
    if (text.empty()) {
        return {};
    }
    json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) {
        return " is not JSON";
    }
    if (!j.is_object()) {
        return std::string(" is a JSON ") + j.type_name() + ", not an object";
    }
    if (j.empty()) {
        return {};  // the column's default: nothing was recorded, as before arms were stored
    }
    // What planning added to the arm: its resolved precision, LR, batch and ranks.
    const struct {
        const char* key;
        bool (json::*is)() const noexcept;
        const char* expected;
    } planned[] = {{"resolved_precision", &json::is_string, "a precision's name"},
                   {"lr", &json::is_number, "a number"},
                   {"effective_batch", &json::is_number_integer, "a whole number"},
                   {"world_size", &json::is_number_integer, "a whole number"},
                   {"backend", &json::is_string, "a string"}};
    for (const auto& p : planned) {
        if (auto it = j.find(p.key); it != j.end()) {
            if (!((*it).*(p.is))()) {
                return std::string(": ") + p.key + " = " + it->dump() + ": expected " + p.expected;
            }
            if (std::string(p.key) == "resolved_precision" &&
                !config::precisionFromString(it->get<std::string>())) {
                return std::string(": ") + p.key + " = " + it->dump() + ": not a precision";
            }
            j.erase(it);
        }
    }
    std::vector<config::FieldError> errors;
    config::armFromJson(j, "arm", errors);
    for (const auto& e : errors) {
        if (e.message != "unknown field") {
            const std::string field = e.field.rfind("arm.", 0) == 0 ? e.field.substr(4) : e.field;
            return ": " + field + " = " + e.value + ": " + e.message;
        }
    }
    const auto name = j.find("name");
    if (name == j.end() || !name->is_string() || name->get<std::string>() != arm) {
        return (name == j.end() ? std::string(" names no arm") : " names arm " + name->dump()) +
               ", but the run is arm \"" + arm + "\"";
    }
    return {};
}

}  // namespace ampbench::config
