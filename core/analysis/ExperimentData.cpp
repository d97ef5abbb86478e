#include "core/analysis/ExperimentData.h"

#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/config/PlannedArm.h"
#include "core/config/SpecJson.h"
#include "core/store/BatchSearchStore.h"
#include "core/store/NumericsStore.h"

namespace ampbench::analysis {

std::string storedArmProblem(const store::RunRow& run) {
    using nlohmann::json;
    const std::string what = "run " + std::to_string(run.id) + "'s stored arm (runs.spec_json)";
    if (run.spec_json.empty()) {
        return {};
    }
    json j = json::parse(run.spec_json, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) {
        return what + " is not JSON";
    }
    if (!j.is_object()) {
        return what + " is a JSON " + j.type_name() + ", not an object";
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
                return what + ": " + p.key + " = " + it->dump() + ": expected " + p.expected;
            }
            if (std::string(p.key) == "resolved_precision" &&
                !config::precisionFromString(it->get<std::string>())) {
                return what + ": " + p.key + " = " + it->dump() + ": not a precision";
            }
            j.erase(it);
        }
    }
    std::vector<config::FieldError> errors;
    config::armFromJson(j, "arm", errors);
    for (const auto& e : errors) {
        if (e.message != "unknown field") {
            const std::string field = e.field.rfind("arm.", 0) == 0 ? e.field.substr(4) : e.field;
            return what + ": " + field + " = " + e.value + ": " + e.message;
        }
    }
    const auto name = j.find("name");
    if (name == j.end() || !name->is_string() || name->get<std::string>() != run.arm) {
        return what + (name == j.end() ? " names no arm" : " names arm " + name->dump()) +
               ", but the run is arm \"" + run.arm + "\"";
    }
    return {};
}

std::optional<ExperimentData> loadExperiment(const store::Database& db, int64_t experiment_id) {
    auto row = db.experiment(experiment_id);
    if (!row) {
        return std::nullopt;
    }
    ExperimentData data;
    data.experiment = *row;
    std::vector<config::FieldError> errors;
    data.spec = config::specFromJsonText(row->spec_json, errors);
    data.spec_ok = errors.empty();
    for (auto& run : db.runs(experiment_id)) {
        RunData r;
        r.steps = db.steps(run.id);
        r.evals = db.evals(run.id);
        r.events = db.events(run.id);
        r.numerics = store::NumericsStore(db).rows(run.id);
        r.row = std::move(run);
        data.runs.push_back(std::move(r));
    }
    // BatchSearchStore wants a mutable connection for writing; searches() only reads.
    store::BatchSearchStore searches(const_cast<store::Database&>(db));
    data.batch_searches = searches.searches(experiment_id);
    for (auto& run : db.rerunsOf(experiment_id)) {
        RunData r;
        r.steps = db.steps(run.id);
        r.evals = db.evals(run.id);
        r.row = std::move(run);
        data.reruns.push_back(std::move(r));
    }
    std::error_code ec;
    const auto absolute = std::filesystem::absolute(db.path(), ec);
    data.database_path = ec ? db.path() : absolute.lexically_normal().string();
    return data;
}

bool timingPass(const store::RunRow& run) {
    return run.spec_json.find("timing_pass") != std::string::npos &&
           config::plannedArmFromJson(run.spec_json).timing_pass;
}

bool finishedPass(const store::RunRow& run) {
    return run.status == run::RunStatus::Finished && timingPass(run);
}

bool isIncomplete(run::RunStatus status) {
    return status != run::RunStatus::Finished && status != run::RunStatus::Failed;
}

}  // namespace ampbench::analysis
