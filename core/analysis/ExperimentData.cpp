#include "core/analysis/ExperimentData.h"

#include <filesystem>

#include "core/config/PlannedArm.h"
#include "core/config/SpecJson.h"
#include "core/store/BatchSearchStore.h"
#include "core/store/NumericsStore.h"

namespace ampbench::analysis {

std::string storedArmProblem(const store::RunRow& run) {
    const std::string problem = config::plannedArmProblem(run.spec_json, run.arm);
    return problem.empty()
               ? problem
               : "run " + std::to_string(run.id) + "'s stored arm (runs.spec_json)" + problem;
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
