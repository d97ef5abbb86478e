// Steps, evaluations and events: their inserts and reads, the record sequence (schema
// 6: run-scoped sequence numbers, reading a run's rows after a number) and storing rows
// under the numbers another database gave them. Every column list, bind and read is
// derived from the field tables (run/RecordFields.h).
#include "core/store/RecordStore.h"

#include <sqlite3.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <type_traits>
#include <variant>

#include "core/store/private/RecordSql.h"
#include "core/store/private/Schema.h"

namespace ampbench::store {
namespace {

using schema::ImplicitTransaction;
using schema::RecordTable;
using schema::Statement;

/// "SELECT seq, the fields FROM table WHERE run_id = ?1 AND " + `where`: the record
/// starts at column 1.
template <class R>
std::string selectSequenced(const std::vector<run::RecordField<R>>& fields,
                            const std::string& where) {
    return "SELECT seq, " + schema::columns(fields) + " FROM " + RecordTable<R>::name +
           " WHERE run_id = ?1 AND " + where;
}

template <class R>
SequencedRecord readSequenced(const Statement& st, const std::vector<run::RecordField<R>>& fields,
                              const std::string& path, int64_t run_id) {
    return {st.i64(0), schema::readFields(st, 1, fields, path, run_id)};
}

bool sameReal(double a, double b) {
    return a == b || (std::isnan(a) && std::isnan(b));
}

/// Every field equal (NaN equal to NaN).
template <class R>
bool sameFields(const R& a, const R& b) {
    bool same = true;
    for (const auto& f : run::recordFields<R>()) {
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
    return std::visit(
        [&](const auto& x) {
            using R = std::decay_t<decltype(x)>;
            return sameFields(x, std::get<R>(b.record));
        },
        a.record);
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

/// The run's rows at one seq, read through the (run_id, seq) indexes (on a writer's
/// connection: every field).
class RowAtSeq {
  public:
    RowAtSeq(sqlite3* db, const std::string& path, int64_t run_id, const std::string& what)
        : path_(path),
          run_(run_id),
          step_(db, path, selectSequenced(run::stepFields(), "seq = ?2"), what),
          eval_(db, path, selectSequenced(run::evalFields(), "seq = ?2"), what),
          event_(db, path, selectSequenced(run::eventFields(), "seq = ?2"), what),
          step_seq_(db, path, "SELECT seq FROM steps WHERE run_id = ?1 AND step = ?2", what),
          eval_seq_(db, path, "SELECT seq FROM evals WHERE run_id = ?1 AND step = ?2", what) {}

    /// What the run holds at `seq`, looking first where a row like `like` would be.
    std::optional<SequencedRecord> at(int64_t seq, const SequencedRecord& like) {
        const size_t first = like.record.index();
        if (auto r = in(first, seq))
            return r;
        for (size_t kind = 0; kind < std::variant_size_v<decltype(like.record)>; ++kind) {
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
        if (kind == 0)
            return read<run::StepRecord>(step_, seq);
        if (kind == 1)
            return read<run::EvalRecord>(eval_, seq);
        return read<run::EventRecord>(event_, seq);
    }

    template <class R>
    std::optional<SequencedRecord> read(Statement& st, int64_t seq) {
        st.bindInt(1, run_).bindInt(2, seq);
        std::optional<SequencedRecord> out;
        if (st.step())
            out = readSequenced(st, run::recordFields<R>(), path_, run_);
        st.reset();
        return out;
    }

    const std::string& path_;
    int64_t run_;
    Statement step_, eval_, event_, step_seq_, eval_seq_;
};

/// The run's rows of one table with seq > after_seq, in seq order; at most `cap`
/// (-1: all); every field a file of `schema_version` has.
template <class R>
std::vector<SequencedRecord> rowsSince(sqlite3* db, const std::string& path, int schema_version,
                                       int64_t run_id, int64_t after_seq, int64_t cap,
                                       const std::string& what) {
    const auto fields = run::fieldsInSchema(run::recordFields<R>(), schema_version);
    Statement st(db, path, selectSequenced(fields, "seq > ?2 ORDER BY seq LIMIT ?3"), what);
    st.bindInt(1, run_id).bindInt(2, after_seq).bindInt(3, cap);
    std::vector<SequencedRecord> out;
    while (st.step())
        out.push_back(readSequenced(st, fields, path, run_id));
    return out;
}

}  // namespace

void RecordStore::requireSequence() const {
    if (db_.schemaVersion() < 6) {
        throw StoreError(StoreError::Kind::Io,
                         db_.path() + " holds schema " + std::to_string(db_.schemaVersion()) +
                             ", which has no record sequence numbers; open it read-write once "
                             "to upgrade it");
    }
}

// --- inserts ---

/// Each of `rows` with run_id and the run's next seq: the first seq given.
template <class R>
int64_t RecordStore::insert(int64_t run_id, const char* verb, const std::vector<R>& rows,
                            const std::string& what) const {
    if (rows.empty())
        return 0;
    ImplicitTransaction tx(db_.handle(), db_.path());
    const int64_t first = lastSeq(run_id) + 1;
    Statement st(db_.handle(), db_.path(), schema::insertSql(verb, run::recordFields<R>()), what);
    int64_t seq = first;
    for (const R& r : rows) {
        st.bindInt(1, run_id);
        st.bindInt(schema::bindFields(st, 2, run::recordFields<R>(), r), seq++).run();
    }
    tx.commit();
    return first;
}

int64_t RecordStore::insertSteps(int64_t run_id, const std::vector<run::StepRecord>& rows) const {
    return insert(run_id, "INSERT OR REPLACE", rows,
                  "saving steps of run " + std::to_string(run_id));
}

int64_t RecordStore::insertEvals(int64_t run_id, const std::vector<run::EvalRecord>& rows) const {
    return insert(run_id, "INSERT OR REPLACE", rows,
                  "saving evaluations of run " + std::to_string(run_id));
}

int64_t RecordStore::insertEvents(int64_t run_id, const std::vector<run::EventRecord>& rows) const {
    return insert(run_id, "INSERT", rows, "saving events of run " + std::to_string(run_id));
}

// --- reads ---

std::vector<run::StepRecord> RecordStore::steps(int64_t run_id, int64_t after_step,
                                                int64_t limit) const {
    return schema::readRecords<run::StepRecord>(
        db_.handle(), db_.path(), db_.schemaVersion(), run_id,
        " AND step > ?2 ORDER BY step LIMIT ?3",
        [&](Statement& st) { st.bindInt(2, after_step).bindInt(3, limit > 0 ? limit : -1); },
        "reading steps of run " + std::to_string(run_id));
}

std::vector<run::EvalRecord> RecordStore::evals(int64_t run_id, int64_t after_step) const {
    return schema::readRecords<run::EvalRecord>(
        db_.handle(), db_.path(), db_.schemaVersion(), run_id, " AND step > ?2 ORDER BY step",
        [&](Statement& st) { st.bindInt(2, after_step); },
        "reading evaluations of run " + std::to_string(run_id));
}

std::vector<run::EventRecord> RecordStore::events(int64_t run_id) const {
    return schema::readRecords<run::EventRecord>(
        db_.handle(), db_.path(), db_.schemaVersion(), run_id, " ORDER BY step, id",
        [](Statement&) {}, "reading events of run " + std::to_string(run_id));
}

int64_t RecordStore::stepCount(int64_t run_id) const {
    Statement st(db_.handle(), db_.path(), "SELECT COUNT(*) FROM steps WHERE run_id = ?1",
                 "counting steps of run " + std::to_string(run_id));
    st.bindInt(1, run_id);
    st.step();
    return st.i64(0);
}

// --- the record sequence ---

// Three lookups at the end of the (run_id, seq) indexes.
int64_t RecordStore::lastSeq(int64_t run_id) const {
    requireSequence();
    Statement st(db_.handle(), db_.path(),
                 "SELECT MAX((SELECT IFNULL(MAX(seq), 0) FROM steps WHERE run_id = ?1), "
                 "(SELECT IFNULL(MAX(seq), 0) FROM evals WHERE run_id = ?1), "
                 "(SELECT IFNULL(MAX(seq), 0) FROM events WHERE run_id = ?1))",
                 "reading the last record number of run " + std::to_string(run_id));
    st.bindInt(1, run_id);
    st.step();
    return st.i64(0);
}

int64_t RecordStore::stepAtSeq(int64_t run_id, int64_t seq) const {
    requireSequence();
    Statement st(
        db_.handle(), db_.path(),
        "SELECT step FROM steps WHERE run_id = ?1 AND seq <= ?2 ORDER BY seq DESC LIMIT 1",
        "reading the step at record " + std::to_string(seq) + " of run " + std::to_string(run_id));
    st.bindInt(1, run_id).bindInt(2, seq);
    return st.step() ? st.i64(0) : 0;
}

// Each table is read in seq order through its (run_id, seq) index, then the three
// are merged: at most `limit` rows of each are read.
std::vector<SequencedRecord> RecordStore::recordsSince(int64_t run_id, int64_t after_seq,
                                                       int64_t limit) const {
    requireSequence();
    sqlite3* db = db_.handle();
    const std::string& path = db_.path();
    const std::string what = "reading records of run " + std::to_string(run_id);
    const int64_t cap = limit > 0 ? limit : -1;
    const int version = db_.schemaVersion();
    // The three tables in one snapshot: read one after another, a run training meanwhile
    // could commit steps after the steps were read and an event after them before the
    // events were, and the event's seq would carry a follower past the steps between.
    const schema::ReadSnapshot snapshot(db, path);
    std::vector<SequencedRecord> steps =
        rowsSince<run::StepRecord>(db, path, version, run_id, after_seq, cap, what);
    std::vector<SequencedRecord> evals =
        rowsSince<run::EvalRecord>(db, path, version, run_id, after_seq, cap, what);
    std::vector<SequencedRecord> events =
        rowsSince<run::EventRecord>(db, path, version, run_id, after_seq, cap, what);
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

// New rows (above the highest seq the run holds) go straight in; a row at or below it
// is first compared with what the run holds at its seq, in any of the three tables.
RecordStore::SequencedInsert RecordStore::insertSequenced(
    int64_t run_id, const std::vector<SequencedRecord>& rows) const {
    requireSequence();
    SequencedInsert result;
    if (rows.empty())
        return result;
    sqlite3* db = db_.handle();
    const std::string& path = db_.path();
    const std::string what = "saving records of run " + std::to_string(run_id);
    ImplicitTransaction tx(db, path);
    int64_t high = lastSeq(run_id);
    Statement step(db, path, schema::insertSql("INSERT OR IGNORE", run::stepFields()), what);
    Statement eval(db, path, schema::insertSql("INSERT OR IGNORE", run::evalFields()), what);
    Statement event(db, path, schema::insertSql("INSERT OR IGNORE", run::eventFields()), what);
    RowAtSeq stored(db, path, run_id, what);
    // True when stored; false when a step or evaluation of its step is there already.
    auto insert = [&](const SequencedRecord& row) {
        std::visit(
            [&](const auto& r) {
                using R = std::decay_t<decltype(r)>;
                Statement& st = std::is_same_v<R, run::StepRecord>   ? step
                                : std::is_same_v<R, run::EvalRecord> ? eval
                                                                     : event;
                st.bindInt(1, run_id);
                st.bindInt(schema::bindFields(st, 2, run::recordFields<R>(), r), row.seq).run();
            },
            row.record);
        return sqlite3_changes(db) > 0;
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

}  // namespace ampbench::store
