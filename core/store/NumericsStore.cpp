#include "core/store/NumericsStore.h"

#include "core/store/private/Schema.h"

namespace ampbench::store {

using run::NumericsRecord;

namespace {

/// The columns readRow() reads; a file before schema 12 (read-only) has its rows as
/// they were measured, against fp16, with nothing saturated counted and no scale.
std::string columns(int schema_version) {
    return std::string(
               "step, kind, name, absmax, underflow_subnormal, underflow_normal, headroom_log2, "
               "nonfinite, numel, loss_scale, dtype, ") +
           (schema_version >= 12 ? "format, saturated, scale" : "'fp16', 0.0, 1.0");
}

NumericsRecord readRow(const schema::Statement& st) {
    NumericsRecord r;
    r.step = st.i64(0);
    r.kind = run::numericsKindFromString(st.text(1)).value_or(run::NumericsKind::Grad);
    r.name = st.text(2);
    r.absmax = st.real(3);
    r.underflow_subnormal = st.real(4);
    r.underflow_normal = st.real(5);
    r.headroom_log2 = st.real(6);
    r.nonfinite = st.i64(7);
    r.numel = st.i64(8);
    r.loss_scale = st.real(9);
    r.dtype = st.text(10);
    r.format = st.text(11);
    r.saturated = st.real(12);
    r.scale = st.real(13);
    return r;
}

}  // namespace

// A row is first offered with INSERT OR IGNORE, which says whether it is new; a row
// already there is then replaced.
int64_t NumericsStore::insert(int64_t run_id, const std::vector<NumericsRecord>& rows) const {
    if (rows.empty()) {
        return 0;
    }
    const std::string what = "saving the numerics of run " + std::to_string(run_id);
    const std::string values =
        "INTO numerics(run_id, step, kind, name, absmax, underflow_subnormal, underflow_normal, "
        "headroom_log2, nonfinite, numel, loss_scale, dtype, format, saturated, scale) "
        "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)";
    schema::ImplicitTransaction tx(db_.handle(), db_.path());
    schema::Statement add(db_.handle(), db_.path(), "INSERT OR IGNORE " + values, what);
    schema::Statement replace(db_.handle(), db_.path(), "INSERT OR REPLACE " + values, what);
    int64_t added = 0;
    for (const NumericsRecord& r : rows) {
        for (schema::Statement* st : {&add, &replace}) {
            st->bindInt(1, run_id).bindInt(2, r.step).bindText(3, run::toString(r.kind));
            st->bindText(4, r.name).bindReal(5, r.absmax).bindReal(6, r.underflow_subnormal);
            st->bindReal(7, r.underflow_normal).bindReal(8, r.headroom_log2);
            st->bindInt(9, r.nonfinite).bindInt(10, r.numel).bindReal(11, r.loss_scale);
            st->bindText(12, r.dtype).bindText(13, r.format).bindReal(14, r.saturated);
            st->bindReal(15, r.scale).run();
            if (st == &add && sqlite3_changes(db_.handle()) > 0) {
                ++added;
                break;
            }
        }
    }
    tx.commit();
    return added;
}

std::vector<NumericsRecord> NumericsStore::rows(int64_t run_id,
                                                std::optional<run::NumericsKind> kind) const {
    std::vector<NumericsRecord> out;
    if (!available()) {
        return out;
    }
    std::string sql = "SELECT " + columns(db_.schemaVersion()) + " FROM numerics WHERE run_id = ?1";
    if (kind) {
        sql += " AND kind = ?2";
    }
    sql += " ORDER BY kind DESC, name, step";  // gradients first, as they are recorded
    schema::Statement st(db_.handle(), db_.path(), sql,
                         "reading the numerics of run " + std::to_string(run_id));
    st.bindInt(1, run_id);
    if (kind) {
        st.bindText(2, run::toString(*kind));
    }
    while (st.step()) {
        out.push_back(readRow(st));
    }
    return out;
}

std::vector<NumericsRecord> NumericsStore::rowsOfSteps(int64_t run_id, int64_t after_step,
                                                       int64_t upto_step) const {
    std::vector<NumericsRecord> out;
    if (!available() || upto_step <= after_step) {
        return out;
    }
    schema::Statement st(db_.handle(), db_.path(),
                         "SELECT " + columns(db_.schemaVersion()) +
                             " FROM numerics WHERE run_id = ?1 AND step > ?2 AND step <= ?3 "
                             "ORDER BY step, kind DESC, name",
                         "reading the numerics of run " + std::to_string(run_id));
    st.bindInt(1, run_id).bindInt(2, after_step).bindInt(3, upto_step);
    while (st.step()) {
        out.push_back(readRow(st));
    }
    return out;
}

int64_t NumericsStore::count(int64_t run_id) const {
    if (!available()) {
        return 0;
    }
    schema::Statement st(db_.handle(), db_.path(),
                         "SELECT COUNT(*) FROM numerics WHERE run_id = ?1",
                         "counting the numerics of run " + std::to_string(run_id));
    st.bindInt(1, run_id);
    return st.step() ? st.i64(0) : 0;
}

}  // namespace ampbench::store
