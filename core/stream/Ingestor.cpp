#include "core/stream/Ingestor.h"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <thread>

#include "core/config/PlannedArm.h"
#include "core/store/NumericsStore.h"

namespace ampbench::stream {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

/// A wait shorter than this (another writer's commit) goes unsaid.
constexpr milliseconds kSayAfter(1000);

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

std::string secondsText(Clock::duration d) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f s", std::chrono::duration<double>(d).count());
    return buf;
}

std::string limitText(milliseconds limit) {
    const auto ms = limit.count();
    if (ms % 60000 == 0)
        return std::to_string(ms / 60000) + " min";
    return secondsText(limit);
}

/// One write transaction; rolled back unless committed.
class Transaction {
  public:
    explicit Transaction(store::Database& db) : db_(db) { db_.begin(); }
    ~Transaction() {
        if (open_) {
            try {
                db_.rollback();
            } catch (...) {
            }
        }
    }
    Transaction(const Transaction&) = delete;
    Transaction& operator=(const Transaction&) = delete;
    void commit() {
        db_.commit();
        open_ = false;
    }

  private:
    store::Database& db_;
    bool open_ = true;
};

/// Sets the connection's lock wait for one try, then the usual one again.
class LockWaitScope {
  public:
    LockWaitScope(store::Database& db, milliseconds wait) : db_(db) {
        db_.setLockWait(static_cast<int>(wait.count()));
    }
    ~LockWaitScope() { db_.setLockWait(store::Database::kLockWaitMs); }
    LockWaitScope(const LockWaitScope&) = delete;
    LockWaitScope& operator=(const LockWaitScope&) = delete;

  private:
    store::Database& db_;
};

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

template <class Write>
void Ingestor::withLock(const std::string& what, Write write) {
    if (!lock_wait_) {
        write();
        return;
    }
    const store::LockPolicy& policy = lock_wait_->policy;
    const auto start = Clock::now();
    milliseconds pause(100);
    bool told = false;
    for (;;) {
        try {
            const LockWaitScope scope(db_, policy.try_wait);
            write();
            break;
        } catch (const store::StoreError& e) {
            if (e.kind() != store::StoreError::Kind::Busy)
                throw;
        }
        const auto held = Clock::now() - start;
        if (held >= policy.limit) {
            throw store::StoreError(store::StoreError::Kind::Busy,
                                    db_.path() + " stayed locked by another program for " +
                                        secondsText(held) + " (the limit, as for training, is " +
                                        limitText(policy.limit) + "); " + what +
                                        " could not be written");
        }
        if (!told && held >= kSayAfter && lock_wait_->notice) {
            lock_wait_->notice(db_.path() + " is locked by another program; waiting up to " +
                               limitText(policy.limit) + " to write " + what);
        }
        told = told || held >= kSayAfter;
        const auto left = std::chrono::duration_cast<milliseconds>(policy.limit - held);
        std::this_thread::sleep_for(std::min(pause, left));
        pause = std::min(pause * 2, policy.max_backoff);
    }
    if (told && lock_wait_->notice) {
        lock_wait_->notice("the lock on " + db_.path() + " went after " +
                           secondsText(Clock::now() - start) + "; " + what + " written");
    }
}

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
