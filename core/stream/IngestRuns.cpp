// The stream's experiments and runs mapped to rows here by their origin: looked up or
// added, refused when the row under their ids is another one; a run's state, and the
// records of runs the stream never introduced.
#include <string>

#include "core/config/PlannedArm.h"
#include "core/stream/Ingestor.h"
#include "core/stream/private/IngestWrite.h"

namespace ampbench::stream {
namespace {

using detail::Transaction;

/// What tells an experiment from another one with the same ids: what never changes
/// once it is made. Empty when they are the same.
std::string experimentDifference(const store::ExperimentRow& here,
                                 const store::ExperimentRow& stream) {
    if (!stream.created_at.empty() && here.created_at != stream.created_at) {
        return "it was created at " + stream.created_at + ", the one here at " + here.created_at;
    }
    if (here.spec_json != stream.spec_json)
        return "their specs differ";
    return {};
}

std::string runDifference(const store::RunRow& here, const store::RunRow& stream,
                          int64_t local_experiment) {
    if (here.experiment_id != local_experiment)
        return "the one here belongs to experiment " + std::to_string(here.experiment_id);
    if (here.arm != stream.arm || here.arm_index != stream.arm_index)
        return "it trains arm \"" + stream.arm + "\", the one here arm \"" + here.arm + "\"";
    if (here.seed != stream.seed)
        return "its seed is " + std::to_string(stream.seed) + ", the one here " +
               std::to_string(here.seed);
    if (here.spec_json != stream.spec_json || here.planned_steps != stream.planned_steps ||
        here.inputs_json != stream.inputs_json)
        return "their specs differ";
    return {};
}

}  // namespace

// Looked up and added in one write transaction, so two ingests of one stream agree.
Ingestor::Resolved Ingestor::resolveExperiment(const store::ExperimentRow& e) {
    Resolved out;
    Transaction tx(db_);
    const auto differs = [&](int64_t local) {
        const auto here = db_.experiment(local);
        return here ? experimentDifference(*here, e) : std::string("it is gone");
    };
    if (const auto local = imports_.experimentFromOrigin(source_.label, source_.database, e.id)) {
        out.local = *local;
        out.mismatch = differs(*local);
    } else if (const auto legacy =
                   source_.database.empty()
                       ? std::nullopt
                       : imports_.experimentFromOrigin(source_.label, std::string(), e.id);
               legacy && differs(*legacy).empty()) {
        // Read before from a stream that did not name its database: the same one.
        imports_.setExperimentOriginDatabase(*legacy, source_.database);
        out.local = *legacy;
    } else {
        out.local = imports_.importExperiment(e, source_.label, source_.database);
        out.added = true;
    }
    tx.commit();
    return out;
}

void Ingestor::experiment(const store::ExperimentRow& e) {
    if (experiments_.count(e.id) || refused_experiments_.count(e.id))
        return;
    Resolved found;
    withLock("experiment " + std::to_string(e.id), [&] { found = resolveExperiment(e); });
    if (!found.mismatch.empty()) {
        problem(IngestProblem::Kind::Conflict, line_,
                "experiment " + std::to_string(e.id) + " of " + sourceName() +
                    " is not experiment " + std::to_string(found.local) +
                    " here, which came from there under the same id (" + found.mismatch +
                    "): two databases under one origin; nothing of it was read (ingest this "
                    "stream with another --origin to keep it apart)");
        refused_experiments_[e.id] = line_;
        return;
    }
    experiments_[e.id] = found.local;
    if (found.added)
        ++counts_.experiments;
}

Ingestor::Resolved Ingestor::resolveRun(const store::RunRow& r, int64_t local_experiment) {
    Resolved out;
    Transaction tx(db_);
    const auto differs = [&](int64_t local) {
        const auto here = db_.run(local);
        return here ? runDifference(*here, r, local_experiment) : std::string("it is gone");
    };
    if (const auto local = imports_.runFromOrigin(source_.label, source_.database, r.id)) {
        out.local = *local;
        out.mismatch = differs(*local);
    } else if (const auto legacy = source_.database.empty()
                                       ? std::nullopt
                                       : imports_.runFromOrigin(source_.label, std::string(), r.id);
               legacy && differs(*legacy).empty()) {
        imports_.setRunOriginDatabase(*legacy, source_.database);
        out.local = *legacy;
    } else {
        out.local = imports_.importRun(r, local_experiment, source_.label, source_.database);
        out.added = true;
    }
    if (out.mismatch.empty() && !out.added)
        imports_.updateImportedRun(out.local, r);
    tx.commit();
    return out;
}

void Ingestor::runRecord(const store::RunRow& r) {
    if (refused_runs_.count(r.id))
        return;
    if (const auto refused = refused_experiments_.find(r.experiment_id);
        refused != refused_experiments_.end()) {
        problem(IngestProblem::Kind::Conflict, line_,
                "run " + std::to_string(r.id) + " belongs to experiment " +
                    std::to_string(r.experiment_id) + ", refused at line " +
                    std::to_string(refused->second) + "; its records are skipped");
        refused_runs_[r.id] = line_;
        return;
    }
    if (const std::string bad = config::plannedArmProblem(r.spec_json, r.arm); !bad.empty()) {
        // Stored, it would be judged as another arm, and the report of its whole
        // experiment refused: it is refused here instead, with its records.
        problem(IngestProblem::Kind::Malformed, line_,
                "run " + std::to_string(r.id) + "'s stored arm (spec_json)" + bad +
                    "; the run and its records are skipped");
        refused_runs_[r.id] = line_;
        runs_.erase(r.id);
        return;
    }
    if (const auto it = runs_.find(r.id); it != runs_.end() && it->second.checked) {
        withLock("run " + std::to_string(r.id),
                 [&] { imports_.updateImportedRun(it->second.local, r); });
        return;
    }
    auto exp = experiments_.find(r.experiment_id);
    if (exp == experiments_.end()) {
        if (auto local =
                imports_.experimentFromOrigin(source_.label, source_.database, r.experiment_id))
            exp = experiments_.emplace(r.experiment_id, *local).first;
    }
    if (exp == experiments_.end()) {
        problem(IngestProblem::Kind::Orphan, line_,
                "run " + std::to_string(r.id) + " belongs to experiment " +
                    std::to_string(r.experiment_id) +
                    ", which the stream never introduced; skipped");
        return;
    }
    Resolved found;
    withLock("run " + std::to_string(r.id), [&] { found = resolveRun(r, exp->second); });
    if (!found.mismatch.empty()) {
        problem(IngestProblem::Kind::Conflict, line_,
                "run " + std::to_string(r.id) + " of " + sourceName() + " is not run " +
                    std::to_string(found.local) +
                    " here, which came from there under the same id (" + found.mismatch +
                    "): two databases under one origin; its records are skipped (ingest this "
                    "stream with another --origin to keep it apart)");
        refused_runs_[r.id] = line_;
        runs_.erase(r.id);
        return;
    }
    if (found.added) {
        ++counts_.runs;
    }
    if (auto it = runs_.find(r.id); it != runs_.end()) {
        it->second.checked = true;  // known from its rows before; its record agrees
        return;
    }
    RunState state;
    state.local = found.local;
    state.last_seq = found.added ? 0 : records_.lastSeq(found.local);
    state.checked = true;
    local_runs_.push_back(state.local);
    touch(r.id, state.local);
    runs_.emplace(r.id, std::move(state));
}

void Ingestor::touch(int64_t remote_run, int64_t local) {
    Touched& t = touched_[local];
    t.remote = remote_run;
    t.origin = source_.label;
}

Ingestor::RunState* Ingestor::known(int64_t remote_run) {
    if (auto it = runs_.find(remote_run); it != runs_.end())
        return &it->second;
    const auto local = imports_.runFromOrigin(source_.label, source_.database, remote_run);
    if (!local)
        return nullptr;
    RunState state;
    state.local = *local;
    state.last_seq = records_.lastSeq(*local);
    local_runs_.push_back(*local);
    touch(remote_run, *local);
    return &runs_.emplace(remote_run, std::move(state)).first->second;
}

void Ingestor::orphan(int64_t remote_run, const std::string& what) {
    if (orphans_[remote_run]++ == 0) {
        problem(IngestProblem::Kind::Orphan, line_,
                what + " of run " + std::to_string(remote_run) +
                    ", which the stream never introduced; skipped");
    }
}

}  // namespace ampbench::stream
