#include "core/store/NumericsStore.h"

#include "core/store/private/RecordSql.h"
#include "core/store/private/Schema.h"

namespace ampbench::store {

using run::NumericsRecord;

// A row is first offered with INSERT OR IGNORE, which says whether it is new; a row
// already there is then replaced.
int64_t NumericsStore::insert(int64_t run_id, const std::vector<NumericsRecord>& rows) const {
    if (rows.empty()) {
        return 0;
    }
    const std::string what = "saving the numerics of run " + std::to_string(run_id);
    const auto& fields = run::numericsFields();
    schema::ImplicitTransaction tx(db_.handle(), db_.path());
    schema::Statement add(db_.handle(), db_.path(),
                          schema::insertSql("INSERT OR IGNORE", fields, schema::Seq::None), what);
    schema::Statement replace(db_.handle(), db_.path(),
                              schema::insertSql("INSERT OR REPLACE", fields, schema::Seq::None),
                              what);
    int64_t added = 0;
    for (const NumericsRecord& r : rows) {
        for (schema::Statement* st : {&add, &replace}) {
            st->bindInt(1, run_id);
            schema::bindFields(*st, 2, fields, r);
            st->run();
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
    if (!available()) {
        return {};
    }
    // Gradients first, as they are recorded. A file before schema 12 (read-only) has
    // its rows as they were measured: against fp16, with nothing saturated counted and
    // no scale (the record's defaults, run::RecordField::since).
    const std::string order = " ORDER BY kind DESC, name, step";
    const std::string what = "reading the numerics of run " + std::to_string(run_id);
    if (kind) {
        return schema::readRecords<NumericsRecord>(
            db_.handle(), db_.path(), db_.schemaVersion(), run_id, " AND kind = ?2" + order,
            [&](schema::Statement& st) { st.bindText(2, run::toString(*kind)); }, what);
    }
    return schema::readRecords<NumericsRecord>(
        db_.handle(), db_.path(), db_.schemaVersion(), run_id, order, [](schema::Statement&) {},
        what);
}

std::vector<NumericsRecord> NumericsStore::rowsOfSteps(int64_t run_id, int64_t after_step,
                                                       int64_t upto_step) const {
    if (!available() || upto_step <= after_step) {
        return {};
    }
    return schema::readRecords<NumericsRecord>(
        db_.handle(), db_.path(), db_.schemaVersion(), run_id,
        " AND step > ?2 AND step <= ?3 ORDER BY step, kind DESC, name",
        [&](schema::Statement& st) { st.bindInt(2, after_step).bindInt(3, upto_step); },
        "reading the numerics of run " + std::to_string(run_id));
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
