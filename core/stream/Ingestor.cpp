// Reads a stream's lines: each decoded and applied (headers, rows and numerics held and
// committed in batches, statuses), and what the end of the input says of its runs.
#include "core/stream/Ingestor.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/store/NumericsStore.h"
#include "core/stream/private/IngestWrite.h"

namespace ampbench::stream {
namespace {

using detail::Clock;
using detail::Transaction;

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

Ingestor::Ingestor(store::Database& db, std::string origin, std::optional<IngestLockWait> lock_wait)
    : db_(db), fixed_origin_(std::move(origin)), lock_wait_(std::move(lock_wait)) {
    source_.label = fixed_origin_;
}

Ingestor::~Ingestor() {
    try {
        lock_wait_.reset();  // one try: finish() is where a lock is waited out
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
        if (e.type() == "header") {
            // What follows a header this build cannot read is not ours to guess at.
            problem(IngestProblem::Kind::Refused, line_,
                    e.problem() + "; nothing after this line was read");
            refused_ = true;
            return false;
        }
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
// checked and starts the records of its origin: ids after it are its database's.
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
    IngestSource next{fixed_origin_, h.database_id};
    if (next.label.empty()) {
        const auto env = nlohmann::json::parse(h.environment_json, nullptr, false);
        if (env.is_object() && env.contains("hostname") && env["hostname"].is_string())
            next.label = env["hostname"].get<std::string>();
        if (const std::string bad = nameProblem(next.label); !bad.empty()) {
            problem(IngestProblem::Kind::Refused, line_,
                    "the host name in the stream's header (environment.hostname) " + bad +
                        "; nothing after this line was read (name the machine with --origin)");
            refused_ = true;
            return;
        }
        if (next.label.empty())
            next.label = "remote";
    }
    if (!header_seen_ || !(next == source_)) {
        // Ids of another database are other rows: nothing looked up before applies.
        experiments_.clear();
        runs_.clear();
        refused_experiments_.clear();
        refused_runs_.clear();
        source_ = next;
        if (std::find(sources_.begin(), sources_.end(), next) == sources_.end())
            sources_.push_back(next);
    }
    header_seen_ = true;
}

void Ingestor::row(RowRecord&& r) {
    if (refused_runs_.count(r.run)) {
        ++counts_.rows_refused;
        return;
    }
    RunState* state = known(r.run);
    if (!state) {
        orphan(r.run, std::string("a ") + rowKind(r.row));
        return;
    }
    const int64_t seq = r.row.seq;
    if (state->ended && seq > state->promised) {
        problem(IngestProblem::Kind::Conflict, line_,
                runName(r.run) + ": " + rowKind(r.row) + " at record " + std::to_string(seq) +
                    " comes after the run's final status, which counted " +
                    std::to_string(state->promised) + " records; skipped");
        ++counts_.rows_refused;
        return;
    }
    // Differences, not sums: sequence numbers may reach the top of int64.
    if (seq > state->last_seq && seq - state->last_seq > 1) {
        problem(IngestProblem::Kind::Gap, line_,
                runName(r.run) + ": " + range(state->last_seq + 1, seq - 1) +
                    " missing (the stream went from " + std::to_string(state->last_seq) + " to " +
                    std::to_string(seq) +
                    "); the records after the gap were kept; "
                    "resume with tail --since " +
                    std::to_string(r.run) + ":" + std::to_string(state->last_seq) + " to fill it");
    }
    state->last_seq = std::max(state->last_seq, seq);
    state->pending.push_back(std::move(r.row));
    state->pending_lines.push_back(line_);
    ++pending_rows_;
    held();
}

void Ingestor::held() {
    const auto now = Clock::now();
    if (pending_rows_ == 1)
        held_since_ = now;
    if (pending_rows_ >= kBatchRows || now - held_since_ >= kCommitAfter)
        commit();
}

void Ingestor::numerics(NumericsGroup&& g) {
    if (refused_runs_.count(g.run))
        return;
    RunState* state = known(g.run);
    if (!state) {
        orphan(g.run, "the numerics of step " + std::to_string(g.step));
        return;
    }
    if (pending_rows_ == 0)
        held_since_ = Clock::now();
    pending_rows_ += g.rows.size();
    state->pending_numerics.insert(state->pending_numerics.end(),
                                   std::make_move_iterator(g.rows.begin()),
                                   std::make_move_iterator(g.rows.end()));
    held();
}

void Ingestor::status(const StatusRecord& s) {
    if (refused_runs_.count(s.run))
        return;
    RunState* state = known(s.run);
    if (!state) {
        orphan(s.run, "the status");
        return;
    }
    if (s.last_seq < state->last_seq) {
        problem(IngestProblem::Kind::Conflict, line_,
                runName(s.run) + ": its status (" + run::toString(s.status) + ") counts " +
                    std::to_string(s.last_seq) + " records, but records up to " +
                    std::to_string(state->last_seq) + " are here; the status was not applied");
        return;
    }
    if (s.last_seq > state->last_seq) {
        problem(IngestProblem::Kind::Gap, line_,
                runName(s.run) + ": " + range(state->last_seq + 1, s.last_seq) +
                    " never arrived (its status says " + std::to_string(s.last_seq) +
                    " were written); resume with tail --since " + std::to_string(s.run) + ":" +
                    std::to_string(state->last_seq) + " to fill it");
        state->last_seq = s.last_seq;
    }
    bool applied = false;
    withLock("the status of run " + std::to_string(s.run), [&] {
        Transaction tx(db_);
        auto local = db_.run(state->local);
        if (!local)
            return;
        local->status = s.status;
        local->failure = s.failure;
        local->error = s.error;
        imports_.updateImportedRun(state->local, *local);
        tx.commit();
        applied = true;
    });
    if (!applied)
        return;
    if (isFinal(s.status)) {
        state->ended = true;
        state->promised = s.last_seq;
    }
    touched_[state->local].ended = isFinal(s.status);
    ++counts_.statuses;
}

void Ingestor::commit() {
    if (pending_rows_ == 0)
        return;
    IngestCounts counts;
    std::vector<IngestProblem> conflicts;
    withLock(std::to_string(pending_rows_) + " rows", [&] {
        counts = counts_;
        conflicts.clear();
        Transaction tx(db_);
        const store::NumericsStore numerics(db_);
        for (auto& [remote, state] : runs_) {
            if (!state.pending.empty()) {
                const auto result = records_.insertSequenced(state.local, state.pending);
                counts.rows_added += result.added;
                counts.rows_present += result.present;
                counts.rows_refused += static_cast<int64_t>(result.conflicts.size());
                for (const auto& c : result.conflicts) {
                    conflicts.push_back({IngestProblem::Kind::Conflict,
                                         state.pending_lines[c.index],
                                         runName(remote) + ": " + c.problem});
                }
            }
            if (!state.pending_numerics.empty()) {
                const int64_t added = numerics.insert(state.local, state.pending_numerics);
                counts.numerics_added += added;
                counts.numerics_present +=
                    static_cast<int64_t>(state.pending_numerics.size()) - added;
            }
        }
        tx.commit();
    });
    counts_ = counts;  // counted once committed: a rolled-back batch is held for the next try
    for (auto& c : conflicts)
        problems_.push_back(std::move(c));
    for (auto& [remote, state] : runs_) {
        state.pending.clear();
        state.pending_lines.clear();
        state.pending_numerics.clear();
    }
    pending_rows_ = 0;
}

void Ingestor::finish() {
    commit();
    for (const auto& [run, skipped] : orphans_) {
        if (skipped > 1) {
            problem(IngestProblem::Kind::Orphan, 0,
                    std::to_string(skipped) + " records of run " + std::to_string(run) +
                        ", which the stream never introduced, were skipped in all");
        }
    }
    orphans_.clear();
    if (!header_seen_ && !refused_) {
        problem(IngestProblem::Kind::Refused, line_,
                "no records: the input ended before a stream's header");
        refused_ = true;
    }
}

void Ingestor::markCutOffRuns() {
    commit();
    for (const auto& [local, t] : touched_) {
        if (t.ended)
            continue;
        std::string where;
        withLock("the end of run " + std::to_string(t.remote), [&] {
            where.clear();
            Transaction tx(db_);
            auto here = db_.run(local);
            if (!here || isFinal(here->status))
                return;  // ended here by an earlier stream, or gone
            const int64_t seq = records_.lastSeq(local);
            const std::string resume =
                "tail --since " + std::to_string(t.remote) + ":" + std::to_string(seq);
            where = seq == 0 ? std::string("ended before any record of the run")
                             : "ended after record " + std::to_string(seq) + " (step " +
                                   std::to_string(here->last_step) + ") without the run's end";
            here->status = run::RunStatus::Interrupted;
            here->failure = run::FailureKind::Interrupted;
            here->error = "its record stream " + where +
                          ": the writer stopped (a full disk, a killed process) or the stream "
                          "was cut; the rows that came are kept, and the rest of the stream (" +
                          resume + " where it was written) completes the run";
            imports_.updateImportedRun(local, *here);
            tx.commit();
            where += "; it is marked interrupted until the rest comes: resume with " + resume;
        });
        if (!where.empty()) {
            problem(IngestProblem::Kind::Gap, 0,
                    "run " + std::to_string(t.remote) + " of " + t.origin + " (here run " +
                        std::to_string(local) + "): the stream " + where);
        }
    }
}

void Ingestor::problem(IngestProblem::Kind kind, int64_t line, std::string message) {
    problems_.push_back({kind, line, std::move(message)});
}

std::string Ingestor::sourceName() const {
    return source_.database.empty() ? source_.label
                                    : source_.label + " (database " + source_.database + ")";
}

std::string Ingestor::runName(int64_t remote_run) const {
    const auto it = runs_.find(remote_run);
    return "run " + std::to_string(remote_run) + " of " + source_.label +
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

std::optional<int64_t> lastSeqFromOrigin(const store::Database& db, const std::string& origin,
                                         const std::string& database, int64_t remote_run) {
    const auto local = store::ImportStore(db).runFromOrigin(origin, database, remote_run);
    if (!local)
        return std::nullopt;
    return db.lastSeq(*local);
}

}  // namespace ampbench::stream
