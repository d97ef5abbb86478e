#include "core/train/Rerun.h"

#include <nlohmann/json.hpp>

#include "core/config/Placement.h"
#include "core/config/PlannedArm.h"
#include "core/config/Validation.h"
#include "core/data/InputRecord.h"
#include "core/probe/Environment.h"
#include "core/train/Experiment.h"

namespace ampbench::train {
using nlohmann::json;

RerunPlan planRerun(const store::Database& db, int64_t run_id) {
    RerunPlan plan;
    auto row = db.run(run_id);
    if (!row) {
        throw store::StoreError(store::StoreError::Kind::NotFound,
                                "no run " + std::to_string(run_id) + " in " + db.path());
    }
    plan.original = *row;
    plan.link_to = row->rerun_of > 0 ? row->rerun_of : row->id;
    const config::ExperimentSpec stored = storedSpec(db, row->experiment_id);
    const auto index = static_cast<size_t>(row->arm_index);
    if (index >= stored.arms.size() || stored.arms[index].name != row->arm) {
        throw SpecError({{"arms", row->arm,
                          "run " + std::to_string(run_id) +
                              "'s arm is not in its experiment's "
                              "stored spec (arm " +
                              std::to_string(row->arm_index) + ")"}});
    }
    config::ArmSpec arm = stored.arms[index];
    // The run's seed is already resolved (offset and repeats applied).
    arm.seed_offset = 0;
    arm.repeats = 0;
    plan.spec = stored;
    plan.spec.arms = {arm};
    plan.spec.seeds = {row->seed};
    const std::string suffix = " (rerun of run " + std::to_string(plan.link_to) + ")";
    std::string name = stored.name;
    // A rerun of a rerun keeps one suffix, naming the first original.
    if (name.size() >= suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
        name.resize(name.size() - suffix.size());
    }
    if (name.size() + suffix.size() > config::kMaxExperimentNameLength) {
        name.resize(config::kMaxExperimentNameLength - suffix.size());
    }
    plan.spec.name = name + suffix;
    plan.deterministic = stored.deterministic;
    return plan;
}

std::vector<std::string> rerunDifferences(const RerunPlan& plan, const std::string& device) {
    std::vector<std::string> out;
    // The files.
    const auto then_inputs = run::inputsFromJson(plan.original.inputs_json);
    if (plan.original.inputs_json.empty()) {
        out.push_back("run " + std::to_string(plan.original.id) +
                      " has no record of its files (recorded before this version): their "
                      "checksums cannot be compared");
    } else {
        for (auto& line : run::inputDifferences(then_inputs, data::recordInputs(plan.spec))) {
            out.push_back(std::move(line));
        }
    }
    // The machine and software.
    if (plan.original.env_json.empty()) {
        out.push_back("run " + std::to_string(plan.original.id) +
                      " never started: there is no environment on record to compare with");
    } else {
        const auto then_env = probe::environmentFromJson(plan.original.env_json);
        for (auto& line :
             probe::environmentDifferences(then_env, probe::probeEnvironment(device))) {
            out.push_back(std::move(line));
        }
    }
    // What this build makes of the arm: precision, learning rate, scaler, ...
    const bool cuda = config::onCuda(device);
    json then_arm = json::parse(plan.original.spec_json, nullptr, false);
    json now_arm = json::parse(
        config::plannedArmToJson(config::planArm(plan.spec, plan.spec.arms.front(), cuda)));
    // The seed offset and repeats are in the run's seed already.
    for (const char* key : {"seed_offset", "repeats"}) {
        if (then_arm.is_object()) {  // a record that is not JSON is no arm to compare
            then_arm.erase(key);
        }
        now_arm.erase(key);
    }
    if (then_arm.is_object() && then_arm != now_arm) {
        std::string fields;
        for (const auto& [key, value] : now_arm.items()) {
            if (!then_arm.contains(key) || then_arm.at(key) != value) {
                fields += (fields.empty() ? "" : ", ") + key + " " +
                          (then_arm.contains(key) ? then_arm.at(key).dump() : "(absent)") + " → " +
                          value.dump();
            }
        }
        for (const auto& [key, value] : then_arm.items()) {
            if (!now_arm.contains(key)) {
                fields += (fields.empty() ? "" : ", ") + key + " " + value.dump() + " → (absent)";
            }
        }
        out.push_back("the arm would be planned differently now: " + fields);
    }
    return out;
}

}  // namespace ampbench::train
