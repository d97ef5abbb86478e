// The record sequence (schema 6): run-scoped sequence numbers of steps, evaluations
// and events, reading a run's rows after a number, and the rows an ingest brings from
// another database (experiments and runs marked with their origin and, from schema 9,
// the id of the database they came from).
#include <sqlite3.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <type_traits>
#include <variant>

#include "core/store/Database.h"
#include "core/store/private/RecordSql.h"
#include "core/store/private/Schema.h"

namespace ampbench::store {
namespace {

using schema::ImplicitTransaction;
using schema::nowIso;
using schema::Statement;

[[noreturn]] void fail(StoreError::Kind kind, const std::string& message) {
    throw StoreError(kind, message);
}

/// Rows read as "seq, the fields": the record starts at column 1.
run::StepRecord readStep(const Statement& st) {
    return schema::readFields(st, 1, run::stepFields());
}

run::EvalRecord readEval(const Statement& st) {
    return schema::readFields(st, 1, run::evalFields());
}

/// "seq, step, kind, message, value".
run::EventRecord readEvent(const Statement& st, const std::string& path, int64_t run_id) {
    run::EventRecord e;
    e.step = st.i64(1);
    try {
        e.kind = run::eventKindFromString(st.text(2));
    } catch (const std::invalid_argument& ex) {
        fail(StoreError::Kind::Io,
             path + ": an event of run " + std::to_string(run_id) + " is unreadable: " + ex.what());
    }
    e.message = st.text(3);
    e.value = st.real(4);
    return e;
}

/// "SELECT seq, the fields FROM table WHERE run_id = ?1 AND " + `where`.
template <class R>
std::string selectSequenced(const char* table, const std::vector<run::RecordField<R>>& fields,
                            const std::string& where) {
    return "SELECT seq, " + schema::columns(fields) + " FROM " + table + " WHERE run_id = ?1 AND " +
           where;
}

std::optional<int64_t> oneId(Statement& st) {
    if (!st.step())
        return std::nullopt;
    return st.i64(0);
}

}  // namespace

void Database::requireSchema6(const char* what) const {
    if (schema_version_ < 6) {
        fail(StoreError::Kind::Io, path_ + " holds schema " + std::to_string(schema_version_) +
                                       ", which has no " + what +
                                       "; open it read-write once to upgrade it");
    }
}

static_assert(Database::kLockWaitMs == schema::kBusyTimeoutMs, "the connection's usual lock wait");

void Database::setLockWait(int milliseconds) {
    sqlite3_busy_timeout(db_, milliseconds);
}

int64_t Database::nextSeq(int64_t run_id) const {
    return lastSeq(run_id) + 1;
}

// Three lookups at the end of the (run_id, seq) indexes.
int64_t Database::lastSeq(int64_t run_id) const {
    requireSchema6("record sequence numbers");
    Statement st(db_, path_,
                 "SELECT MAX((SELECT IFNULL(MAX(seq), 0) FROM steps WHERE run_id = ?1), "
                 "(SELECT IFNULL(MAX(seq), 0) FROM evals WHERE run_id = ?1), "
                 "(SELECT IFNULL(MAX(seq), 0) FROM events WHERE run_id = ?1))",
                 "reading the last record number of run " + std::to_string(run_id));
    st.bindInt(1, run_id);
    st.step();
    return st.i64(0);
}

int64_t Database::stepAtSeq(int64_t run_id, int64_t seq) const {
    requireSchema6("record sequence numbers");
    Statement st(
        db_, path_,
        "SELECT step FROM steps WHERE run_id = ?1 AND seq <= ?2 ORDER BY seq DESC LIMIT 1",
        "reading the step at record " + std::to_string(seq) + " of run " + std::to_string(run_id));
    st.bindInt(1, run_id).bindInt(2, seq);
    return st.step() ? st.i64(0) : 0;
}

// Each table is read in seq order through its (run_id, seq) index, then the three
// are merged: at most `limit` rows of each are read.
std::vector<SequencedRecord> Database::recordsSince(int64_t run_id, int64_t after_seq,
                                                    int64_t limit) const {
    requireSchema6("record sequence numbers");
    const std::string what = "reading records of run " + std::to_string(run_id);
    const int64_t cap = limit > 0 ? limit : -1;
    // The three tables in one snapshot: read one after another, a run training meanwhile
    // could commit steps after the steps were read and an event after them before the
    // events were, and the event's seq would carry a follower past the steps between.
    const schema::ReadSnapshot snapshot(db_, path_);
    std::vector<SequencedRecord> steps, evals, events;
    {
        Statement st(db_, path_,
                     selectSequenced("steps", run::stepFields(), "seq > ?2 ORDER BY seq LIMIT ?3"),
                     what);
        st.bindInt(1, run_id).bindInt(2, after_seq).bindInt(3, cap);
        while (st.step())
            steps.push_back({st.i64(0), readStep(st)});
    }
    {
        Statement st(db_, path_,
                     selectSequenced("evals", run::evalFields(), "seq > ?2 ORDER BY seq LIMIT ?3"),
                     what);
        st.bindInt(1, run_id).bindInt(2, after_seq).bindInt(3, cap);
        while (st.step())
            evals.push_back({st.i64(0), readEval(st)});
    }
    {
        Statement st(db_, path_,
                     "SELECT seq, step, kind, message, value FROM events "
                     "WHERE run_id = ?1 AND seq > ?2 ORDER BY seq LIMIT ?3",
                     what);
        st.bindInt(1, run_id).bindInt(2, after_seq).bindInt(3, cap);
        while (st.step())
            events.push_back({st.i64(0), readEvent(st, path_, run_id)});
    }
    std::vector<SequencedRecord> out;
    out.reserve(steps.size() + evals.size() + events.size());
    auto bySeq = [](const SequencedRecord& a, const SequencedRecord& b) { return a.seq < b.seq; };
    std::merge(std::make_move_iterator(steps.begin()), std::make_move_iterator(steps.end()),
               std::make_move_iterator(evals.begin()), std::make_move_iterator(evals.end()),
               std::back_inserter(out), bySeq);
    const auto middle = static_cast<std::ptrdiff_t>(out.size());
    out.insert(out.end(), std::make_move_iterator(events.begin()),
               std::make_move_iterator(events.end()));
    std::inplace_merge(out.begin(), out.begin() + middle, out.end(), bySeq);
    if (limit > 0 && static_cast<int64_t>(out.size()) > limit)
        out.resize(static_cast<size_t>(limit));
    return out;
}

namespace {

bool sameReal(double a, double b) {
    return a == b || (std::isnan(a) && std::isnan(b));
}

/// Every field equal (NaN equal to NaN).
template <class R>
bool sameFields(const std::vector<run::RecordField<R>>& fields, const R& a, const R& b) {
    bool same = true;
    for (const auto& f : fields) {
        std::visit(
            [&](auto member) {
                using T = std::decay_t<decltype(a.*member)>;
                if constexpr (std::is_same_v<T, double>) {
                    same = same && sameReal(a.*member, b.*member);
                } else {
                    same = same && a.*member == b.*member;
                }
            },
            f.member);
    }
    return same;
}

bool sameRecord(const SequencedRecord& a, const SequencedRecord& b) {
    if (a.record.index() != b.record.index())
        return false;
    if (const auto* x = std::get_if<run::StepRecord>(&a.record))
        return sameFields(run::stepFields(), *x, std::get<run::StepRecord>(b.record));
    if (const auto* x = std::get_if<run::EvalRecord>(&a.record))
        return sameFields(run::evalFields(), *x, std::get<run::EvalRecord>(b.record));
    const auto& x = std::get<run::EventRecord>(a.record);
    const auto& y = std::get<run::EventRecord>(b.record);
    return x.step == y.step && x.kind == y.kind && x.message == y.message &&
           sameReal(x.value, y.value);
}

/// "a step (step 12)", "an event (warning at step 3: "...")": enough to tell two apart.
std::string describe(const SequencedRecord& r) {
    if (const auto* s = std::get_if<run::StepRecord>(&r.record))
        return "a step (step " + std::to_string(s->step) + ")";
    if (const auto* e = std::get_if<run::EvalRecord>(&r.record))
        return "an evaluation (step " + std::to_string(e->step) + ")";
    const auto& v = std::get<run::EventRecord>(r.record);
    constexpr size_t kShown = 60;
    std::string message = v.message.substr(0, kShown);
    for (char& c : message) {
        if (static_cast<unsigned char>(c) < 0x20)
            c = ' ';
    }
    return std::string("an event (") + run::toString(v.kind) + " at step " +
           std::to_string(v.step) + ": \"" + message + (v.message.size() > kShown ? "..." : "") +
           "\")";
}

/// The run's rows at one seq, read through the (run_id, seq) indexes.
class RowAtSeq {
  public:
    RowAtSeq(sqlite3* db, const std::string& path, int64_t run_id, const std::string& what)
        : path_(path),
          run_(run_id),
          step_(db, path, selectSequenced("steps", run::stepFields(), "seq = ?2"), what),
          eval_(db, path, selectSequenced("evals", run::evalFields(), "seq = ?2"), what),
          event_(db, path,
                 "SELECT seq, step, kind, message, value FROM events WHERE run_id = ?1 AND "
                 "seq = ?2",
                 what),
          step_seq_(db, path, "SELECT seq FROM steps WHERE run_id = ?1 AND step = ?2", what),
          eval_seq_(db, path, "SELECT seq FROM evals WHERE run_id = ?1 AND step = ?2", what) {}

    /// What the run holds at `seq`, looking first where a row like `like` would be.
    std::optional<SequencedRecord> at(int64_t seq, const SequencedRecord& like) {
        const size_t first = like.record.index();
        if (auto r = in(first, seq))
            return r;
        for (size_t kind = 0; kind < 3; ++kind) {
            if (kind == first)
                continue;
            if (auto r = in(kind, seq))
                return r;
        }
        return std::nullopt;
    }

    /// The seq a step or evaluation of that step is stored under (0: none).
    int64_t seqOfStep(const SequencedRecord& like) {
        Statement& st =
            std::holds_alternative<run::StepRecord>(like.record) ? step_seq_ : eval_seq_;
        const int64_t step = std::holds_alternative<run::StepRecord>(like.record)
                                 ? std::get<run::StepRecord>(like.record).step
                                 : std::get<run::EvalRecord>(like.record).step;
        st.bindInt(1, run_).bindInt(2, step);
        const int64_t seq = st.step() ? st.i64(0) : 0;
        st.reset();
        return seq;
    }

  private:
    std::optional<SequencedRecord> in(size_t kind, int64_t seq) {
        Statement& st = kind == 0 ? step_ : kind == 1 ? eval_ : event_;
        st.bindInt(1, run_).bindInt(2, seq);
        std::optional<SequencedRecord> out;
        if (st.step()) {
            if (kind == 0) {
                out = SequencedRecord{seq, readStep(st)};
            } else if (kind == 1) {
                out = SequencedRecord{seq, readEval(st)};
            } else {
                out = SequencedRecord{seq, readEvent(st, path_, run_)};
            }
        }
        st.reset();
        return out;
    }

    const std::string& path_;
    int64_t run_;
    Statement step_, eval_, event_, step_seq_, eval_seq_;
};

}  // namespace

// New rows (above the highest seq the run holds) go straight in; a row at or below it
// is first compared with what the run holds at its seq, in any of the three tables.
Database::SequencedInsert Database::insertSequenced(int64_t run_id,
                                                    const std::vector<SequencedRecord>& rows) {
    requireSchema6("record sequence numbers");
    SequencedInsert result;
    if (rows.empty())
        return result;
    const std::string what = "saving records of run " + std::to_string(run_id);
    ImplicitTransaction tx(db_, path_);
    int64_t high = lastSeq(run_id);
    Statement step(db_, path_, schema::insertSql("INSERT OR IGNORE", "steps", run::stepFields()),
                   what);
    Statement eval(db_, path_, schema::insertSql("INSERT OR IGNORE", "evals", run::evalFields()),
                   what);
    Statement event(db_, path_,
                    "INSERT OR IGNORE INTO events(run_id, step, kind, message, value, seq) "
                    "VALUES(?1, ?2, ?3, ?4, ?5, ?6)",
                    what);
    RowAtSeq stored(db_, path_, run_id, what);
    // True when stored; false when a step or evaluation of its step is there already.
    auto insert = [&](const SequencedRecord& row) {
        if (const auto* r = std::get_if<run::StepRecord>(&row.record)) {
            step.bindInt(1, run_id);
            step.bindInt(schema::bindFields(step, 2, run::stepFields(), *r), row.seq).run();
        } else if (const auto* e = std::get_if<run::EvalRecord>(&row.record)) {
            eval.bindInt(1, run_id);
            eval.bindInt(schema::bindFields(eval, 2, run::evalFields(), *e), row.seq).run();
        } else {
            const auto& v = std::get<run::EventRecord>(row.record);
            event.bindInt(1, run_id).bindInt(2, v.step).bindText(3, run::toString(v.kind));
            event.bindText(4, v.message).bindReal(5, v.value).bindInt(6, row.seq).run();
        }
        return sqlite3_changes(db_) > 0;
    };
    for (size_t i = 0; i < rows.size(); ++i) {
        const SequencedRecord& row = rows[i];
        const std::string here = "record " + std::to_string(row.seq) + " is ";
        if (row.seq <= high) {
            if (auto held = stored.at(row.seq, row)) {
                if (sameRecord(*held, row)) {
                    ++result.present;
                } else {
                    result.conflicts.push_back({i, here + describe(*held) + " here, and " +
                                                       describe(row) +
                                                       " in the stream; the one here is kept"});
                }
                continue;
            }
        }
        if (insert(row)) {
            ++result.added;
            high = std::max(high, row.seq);
        } else {
            result.conflicts.push_back({i, here + describe(row) +
                                               " in the stream, but that step is stored here as " +
                                               "record " + std::to_string(stored.seqOfStep(row)) +
                                               "; the one here is kept"});
        }
    }
    tx.commit();
    return result;
}

// --- rows read from another database ---

std::string Database::databaseId() const {
    if (schema_version_ < 9)
        return {};
    Statement st(db_, path_, "SELECT value FROM database_info WHERE key = 'database_id'",
                 "reading the database's id");
    return st.step() ? st.text(0) : std::string();
}

std::string Database::sameDatabase(int param) const {
    return schema_version_ >= 9 ? " AND origin_database = ?" + std::to_string(param) : "";
}

std::optional<int64_t> Database::experimentFromOrigin(const std::string& origin,
                                                      const std::string& database,
                                                      int64_t id) const {
    requireSchema6("origins");
    if (schema_version_ < 9 && !database.empty())
        return std::nullopt;  // no row of an older file names a database
    Statement st(
        db_, path_,
        "SELECT id FROM experiments WHERE origin = ?1 AND origin_id = ?2" + sameDatabase(3),
        "looking up an experiment from " + origin);
    st.bindInt(2, id).bindText(1, origin);
    if (schema_version_ >= 9)
        st.bindText(3, database);
    return oneId(st);
}

std::optional<int64_t> Database::runFromOrigin(const std::string& origin,
                                               const std::string& database, int64_t id) const {
    requireSchema6("origins");
    if (schema_version_ < 9 && !database.empty())
        return std::nullopt;
    Statement st(db_, path_,
                 "SELECT id FROM runs WHERE origin = ?1 AND origin_run_id = ?2" + sameDatabase(3),
                 "looking up a run from " + origin);
    st.bindText(1, origin).bindInt(2, id);
    if (schema_version_ >= 9)
        st.bindText(3, database);
    return oneId(st);
}

std::optional<int64_t> Database::experimentFromOrigin(const std::string& origin, int64_t id) const {
    requireSchema6("origins");
    Statement st(db_, path_,
                 "SELECT id FROM experiments WHERE origin = ?1 AND origin_id = ?2 "
                 "ORDER BY id DESC LIMIT 1",
                 "looking up an experiment from " + origin);
    st.bindText(1, origin).bindInt(2, id);
    return oneId(st);
}

std::optional<int64_t> Database::runFromOrigin(const std::string& origin, int64_t id) const {
    requireSchema6("origins");
    Statement st(db_, path_,
                 "SELECT id FROM runs WHERE origin = ?1 AND origin_run_id = ?2 "
                 "ORDER BY id DESC LIMIT 1",
                 "looking up a run from " + origin);
    st.bindText(1, origin).bindInt(2, id);
    return oneId(st);
}

void Database::setExperimentOriginDatabase(int64_t experiment_id, const std::string& database) {
    requireSchema6("origins");
    Statement st(db_, path_, "UPDATE experiments SET origin_database = ?2 WHERE id = ?1",
                 "recording where experiment " + std::to_string(experiment_id) + " came from");
    st.bindInt(1, experiment_id).bindText(2, database).run();
}

void Database::setRunOriginDatabase(int64_t run_id, const std::string& database) {
    requireSchema6("origins");
    Statement st(db_, path_, "UPDATE runs SET origin_database = ?2 WHERE id = ?1",
                 "recording where run " + std::to_string(run_id) + " came from");
    st.bindInt(1, run_id).bindText(2, database).run();
}

int64_t Database::importExperiment(const ExperimentRow& remote, const std::string& origin,
                                   const std::string& database) {
    requireSchema6("origins");
    Statement st(db_, path_,
                 "INSERT INTO experiments(name, spec_json, notes, created_at, origin, origin_id, "
                 "origin_database) VALUES(?1, ?2, '', ?3, ?4, ?5, ?6)",
                 "adding experiment " + std::to_string(remote.id) + " from " + origin);
    st.bindText(1, remote.name).bindText(2, remote.spec_json);
    st.bindText(3, remote.created_at.empty() ? nowIso() : remote.created_at);
    st.bindText(4, origin).bindInt(5, remote.id).bindText(6, database).run();
    return sqlite3_last_insert_rowid(db_);
}

int64_t Database::importRun(const RunRow& remote, int64_t experiment_id, const std::string& origin,
                            const std::string& database) {
    requireSchema6("origins");
    Statement st(db_, path_,
                 "INSERT INTO runs(experiment_id, arm, arm_index, seed, spec_json, env_json, "
                 "status, error, failure, started_at, ended_at, planned_steps, inputs_json, "
                 "created_at, origin, origin_run_id, origin_database) VALUES(?1, ?2, ?3, ?4, ?5, "
                 "?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)",
                 "adding run " + std::to_string(remote.id) + " from " + origin);
    st.bindInt(1, experiment_id).bindText(2, remote.arm).bindInt(3, remote.arm_index);
    st.bindInt(4, static_cast<int64_t>(remote.seed)).bindText(5, remote.spec_json);
    st.bindText(6, remote.env_json).bindText(7, run::toString(remote.status));
    st.bindText(8, remote.error).bindText(9, run::toString(remote.failure));
    st.bindText(10, remote.started_at).bindText(11, remote.ended_at);
    st.bindInt(12, remote.planned_steps).bindText(13, remote.inputs_json);
    st.bindText(14, nowIso()).bindText(15, origin).bindInt(16, remote.id);
    st.bindText(17, database).run();
    return sqlite3_last_insert_rowid(db_);
}

void Database::updateImportedRun(int64_t run_id, const RunRow& remote) {
    requireSchema6("origins");
    Statement st(db_, path_,
                 "UPDATE runs SET status = ?2, failure = ?3, error = ?4, env_json = ?5, "
                 "started_at = ?6, ended_at = ?7 WHERE id = ?1",
                 "updating run " + std::to_string(run_id));
    st.bindInt(1, run_id).bindText(2, run::toString(remote.status));
    st.bindText(3, run::toString(remote.failure)).bindText(4, remote.error);
    st.bindText(5, remote.env_json).bindText(6, remote.started_at).bindText(7, remote.ended_at);
    st.run();
    if (sqlite3_changes(db_) == 0)
        fail(StoreError::Kind::NotFound, path_ + " has no run " + std::to_string(run_id));
}

}  // namespace ampbench::store
