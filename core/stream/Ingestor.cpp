#include "core/stream/Ingestor.h"

#include <nlohmann/json.hpp>

#include "core/store/NumericsStore.h"

namespace ampbench::stream {
namespace {

const char* rowKind(const store::SequencedRecord& row) {
    if (std::holds_alternative<run::StepRecord>(row.record))
        return "step";
    return std::holds_alternative<run::EvalRecord>(row.record) ? "evaluation" : "event";
}

std::string range(int64_t from, int64_t to) {
    return from == to ? "record " + std::to_string(from)
                      : "records " + std::to_string(from) + "-" + std::to_string(to);
}

bool isFinal(run::RunStatus s) {
    return s != run::RunStatus::Queued && s != run::RunStatus::Running;
}

}  // namespace

Ingestor::Ingestor(store::Database& db, std::string origin) : db_(db), origin_(std::move(origin)) {}

Ingestor::~Ingestor() {
    try {
        commit();
    } catch (...) {
        // A destructor must not throw; finish() reports.
    }
}

bool Ingestor::feed(const std::string& text) {
    ++line_;
    ++counts_.lines;
    if (refused_)
        return false;
    if (text.find_first_not_of(" \t\r") == std::string::npos)
        return true;
    Record record;
    try {
        record = decode(text, line_);
    } catch (const StreamError& e) {
        if (!header_seen_) {
            problem(IngestProblem::Kind::Refused, line_,
                    "not a record stream (" + e.problem() + "); a stream begins with a header");
            refused_ = true;
            return false;
        }
        problem(IngestProblem::Kind::Malformed, line_, e.problem() + "; skipped");
        return true;
    }
    if (!header_seen_ && !std::holds_alternative<Header>(record)) {
        problem(IngestProblem::Kind::Refused, line_,
                "not a record stream: the first record is not a header");
        refused_ = true;
        return false;
    }
    apply(std::move(record));
    return !refused_;
}

void Ingestor::apply(Record&& record) {
    if (auto* r = std::get_if<RowRecord>(&record)) {
        row(std::move(*r));
        return;
    }
    if (auto* g = std::get_if<NumericsGroup>(&record)) {
        numerics(std::move(*g));
        return;
    }
    commit();  // rows before an experiment, run or status record are written first
    if (const auto* h = std::get_if<Header>(&record))
        header(*h);
    else if (const auto* e = std::get_if<store::ExperimentRow>(&record))
        experiment(*e);
    else if (const auto* r = std::get_if<store::RunRow>(&record))
        runRecord(*r);
    else
        status(std::get<StatusRecord>(record));
}

// A stream may hold several headers (streams written one after another); each is
// checked, and the origin comes from the first.
void Ingestor::header(const Header& h) {
    if (h.stream_version != kStreamVersion) {
        problem(IngestProblem::Kind::Refused, line_,
                "the stream is version " + std::to_string(h.stream_version) +
                    " and this build reads version " + std::to_string(kStreamVersion) +
                    " only; nothing after this line was read (use the same ampbench version on "
                    "both machines)");
        refused_ = true;
        return;
    }
    header_seen_ = true;
    if (origin_.empty()) {
        const auto env = nlohmann::json::parse(h.environment_json, nullptr, false);
        if (env.is_object() && env.contains("hostname") && env["hostname"].is_string())
            origin_ = env["hostname"].get<std::string>();
        if (origin_.empty())
            origin_ = "remote";
    }
}

void Ingestor::experiment(const store::ExperimentRow& e) {
    if (experiments_.count(e.id))
        return;
    if (auto local = db_.experimentFromOrigin(origin_, e.id)) {
        experiments_[e.id] = *local;
        return;
    }
    experiments_[e.id] = db_.importExperiment(e, origin_);
    ++counts_.experiments;
}

void Ingestor::runRecord(const store::RunRow& r) {
    if (RunState* state = known(r.id)) {
        db_.updateImportedRun(state->local, r);
        state->final = isFinal(r.status);
        return;
    }
    auto exp = experiments_.find(r.experiment_id);
    if (exp == experiments_.end()) {
        if (auto local = db_.experimentFromOrigin(origin_, r.experiment_id))
            exp = experiments_.emplace(r.experiment_id, *local).first;
    }
    if (exp == experiments_.end()) {
        problem(IngestProblem::Kind::Orphan, line_,
                "run " + std::to_string(r.id) + " belongs to experiment " +
                    std::to_string(r.experiment_id) +
                    ", which the stream never introduced; skipped");
        return;
    }
    RunState state;
    state.local = db_.importRun(r, exp->second, origin_);
    state.final = isFinal(r.status);
    ++counts_.runs;
    local_runs_.push_back(state.local);
    runs_.emplace(r.id, std::move(state));
}

Ingestor::RunState* Ingestor::known(int64_t remote_run) {
    if (auto it = runs_.find(remote_run); it != runs_.end())
        return &it->second;
    const auto local = db_.runFromOrigin(origin_, remote_run);
    if (!local)
        return nullptr;
    RunState state;
    state.local = *local;
    state.last_seq = db_.lastSeq(*local);
    local_runs_.push_back(*local);
    return &runs_.emplace(remote_run, std::move(state)).first->second;
}

void Ingestor::row(RowRecord&& r) {
    RunState* state = known(r.run);
    if (!state) {
        problem(IngestProblem::Kind::Orphan, line_,
                std::string("a ") + rowKind(r.row) + " of run " + std::to_string(r.run) +
                    ", which the stream never introduced; skipped");
        return;
    }
    const int64_t seq = r.row.seq;
    if (seq > state->last_seq + 1) {
        problem(IngestProblem::Kind::Gap, line_,
                runName(r.run) + ": " + range(state->last_seq + 1, seq - 1) +
                    " missing (the stream went from " + std::to_string(state->last_seq) + " to " +
                    std::to_string(seq) +
                    "); the records after the gap were kept; "
                    "resume with tail --since " +
                    std::to_string(state->last_seq) + " to fill it");
    }
    state->last_seq = std::max(state->last_seq, seq);
    state->pending.push_back(std::move(r.row));
    if (++pending_rows_ >= kBatchRows)
        commit();
}

void Ingestor::numerics(NumericsGroup&& g) {
    RunState* state = known(g.run);
    if (!state) {
        problem(IngestProblem::Kind::Orphan, line_,
                "the numerics of step " + std::to_string(g.step) + " of run " +
                    std::to_string(g.run) + ", which the stream never introduced; skipped");
        return;
    }
    pending_rows_ += g.rows.size();
    state->pending_numerics.insert(state->pending_numerics.end(),
                                   std::make_move_iterator(g.rows.begin()),
                                   std::make_move_iterator(g.rows.end()));
    if (pending_rows_ >= kBatchRows)
        commit();
}

void Ingestor::status(const StatusRecord& s) {
    RunState* state = known(s.run);
    if (!state) {
        problem(IngestProblem::Kind::Orphan, line_,
                "the status of run " + std::to_string(s.run) +
                    ", which the stream never introduced; skipped");
        return;
    }
    if (s.last_seq > state->last_seq) {
        problem(IngestProblem::Kind::Gap, line_,
                runName(s.run) + ": " + range(state->last_seq + 1, s.last_seq) +
                    " never arrived (its status says " + std::to_string(s.last_seq) +
                    " were written); resume with tail --since " + std::to_string(state->last_seq) +
                    " to fill it");
        state->last_seq = s.last_seq;
    }
    state->promised = s.last_seq;
    auto local = db_.run(state->local);
    if (!local)
        return;
    local->status = s.status;
    local->failure = s.failure;
    local->error = s.error;
    db_.updateImportedRun(state->local, *local);
    state->final = isFinal(s.status);
    ++counts_.statuses;
}

void Ingestor::commit() {
    if (pending_rows_ == 0)
        return;
    IngestCounts counts = counts_;
    db_.begin();
    try {
        const store::NumericsStore numerics(db_);
        for (auto& [remote, state] : runs_) {
            if (!state.pending.empty()) {
                const int64_t added = db_.insertSequenced(state.local, state.pending);
                counts.rows_added += added;
                counts.rows_present += static_cast<int64_t>(state.pending.size()) - added;
            }
            if (!state.pending_numerics.empty()) {
                const int64_t added = numerics.insert(state.local, state.pending_numerics);
                counts.numerics_added += added;
                counts.numerics_present +=
                    static_cast<int64_t>(state.pending_numerics.size()) - added;
            }
        }
        db_.commit();
    } catch (...) {
        db_.rollback();
        throw;
    }
    counts_ = counts;  // counted once committed: a rolled-back batch is held for the next try
    for (auto& [remote, state] : runs_) {
        state.pending.clear();
        state.pending_numerics.clear();
    }
    pending_rows_ = 0;
}

void Ingestor::finish() {
    commit();
    if (!header_seen_ && !refused_) {
        problem(IngestProblem::Kind::Refused, line_,
                "no records: the input ended before a stream's header");
        refused_ = true;
    }
}

void Ingestor::problem(IngestProblem::Kind kind, int64_t line, std::string message) {
    problems_.push_back({kind, line, std::move(message)});
}

std::string Ingestor::runName(int64_t remote_run) const {
    const auto it = runs_.find(remote_run);
    return "run " + std::to_string(remote_run) + " of " + origin_ +
           (it == runs_.end() ? std::string()
                              : " (here run " + std::to_string(it->second.local) + ")");
}

std::optional<int64_t> lastSeqFromOrigin(const store::Database& db, const std::string& origin,
                                         int64_t remote_run) {
    const auto local = db.runFromOrigin(origin, remote_run);
    if (!local)
        return std::nullopt;
    return db.lastSeq(*local);
}

}  // namespace ampbench::stream
