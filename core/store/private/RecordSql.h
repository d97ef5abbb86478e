#pragma once
// SQL over the record field tables (run/RecordFields.h): the tables, the column list,
// the placeholders, binding a record and reading one back, in the table's order.
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "core/run/RecordFields.h"
#include "core/store/StoreError.h"
#include "core/store/private/Schema.h"

namespace ampbench::store::schema {

/// The table a record kind is stored in, and the record as messages name it.
template <class R>
struct RecordTable;
template <>
struct RecordTable<run::StepRecord> {
    static constexpr const char* name = "steps";
    static constexpr const char* noun = "a step";
};
template <>
struct RecordTable<run::EvalRecord> {
    static constexpr const char* name = "evals";
    static constexpr const char* noun = "an evaluation";
};
template <>
struct RecordTable<run::EventRecord> {
    static constexpr const char* name = "events";
    static constexpr const char* noun = "an event";
};
template <>
struct RecordTable<run::NumericsRecord> {
    static constexpr const char* name = "numerics";
    static constexpr const char* noun = "a numerics row";
};

/// "step, samples, loss, ...".
template <class R>
std::string columns(const std::vector<run::RecordField<R>>& fields) {
    std::string out;
    for (const auto& f : fields) {
        out += (out.empty() ? "" : ", ") + std::string(f.name);
    }
    return out;
}

/// "?first, ?first+1, ..." for `count` parameters.
inline std::string placeholders(int first, size_t count) {
    std::string out;
    for (size_t i = 0; i < count; ++i) {
        out += (i ? ", ?" : "?") + std::to_string(first + static_cast<int>(i));
    }
    return out;
}

/// Whether a table's rows carry the run's sequence number (steps, evaluations and
/// events do; numerics are keyed by step, kind and name).
enum class Seq { Last, None };

/// "VERB INTO table(run_id, the fields[, seq]) VALUES(?1, ...)": run_id is ?1, the
/// fields follow from ?2, seq (when the table has it) is the last.
template <class R>
std::string insertSql(const char* verb, const std::vector<run::RecordField<R>>& fields,
                      Seq seq = Seq::Last) {
    const bool with_seq = seq == Seq::Last;
    return std::string(verb) + " INTO " + RecordTable<R>::name + "(run_id, " + columns(fields) +
           (with_seq ? ", seq" : "") + ") VALUES(" +
           placeholders(1, fields.size() + (with_seq ? 2 : 1)) + ")";
}

/// Binds `record`'s fields to parameters first, first + 1, ...; returns the next index.
template <class R>
int bindFields(Statement& st, int first, const std::vector<run::RecordField<R>>& fields,
               const R& record) {
    int i = first;
    run::visitFields(fields, record, [&](const auto&, const auto& value) {
        using T = std::decay_t<decltype(value)>;
        if constexpr (std::is_same_v<T, double>) {
            st.bindReal(i++, value);
        } else if constexpr (std::is_same_v<T, bool>) {
            st.bindInt(i++, value ? 1 : 0);
        } else if constexpr (std::is_same_v<T, std::string>) {
            st.bindText(i++, value);
        } else if constexpr (std::is_enum_v<T>) {
            st.bindText(i++, run::EnumText<T>::text(value));
        } else {
            static_assert(std::is_same_v<T, int64_t>);
            st.bindInt(i++, value);
        }
    });
    return i;
}

/// A record from columns first, first + 1, ... of the current row: the columns of
/// `fields` (run::fieldsInSchema where the file is older); a field left out keeps the
/// record's default. An enumeration's unknown text throws StoreError(Io) naming the
/// file, the record and the run.
template <class R>
R readFields(const Statement& st, int first, const std::vector<run::RecordField<R>>& fields,
             const std::string& path, int64_t run_id) {
    R record;
    int col = first;
    run::visitFields(fields, record, [&](const auto&, auto& value) {
        using T = std::decay_t<decltype(value)>;
        if constexpr (std::is_same_v<T, double>) {
            value = st.real(col++);
        } else if constexpr (std::is_same_v<T, bool>) {
            value = st.i64(col++) != 0;
        } else if constexpr (std::is_same_v<T, std::string>) {
            value = st.text(col++);
        } else if constexpr (std::is_enum_v<T>) {
            try {
                value = run::EnumText<T>::parse(st.text(col++));
            } catch (const std::invalid_argument& e) {
                throw StoreError(StoreError::Kind::Io, path + ": " + RecordTable<R>::noun +
                                                           " of run " + std::to_string(run_id) +
                                                           " is unreadable: " + e.what());
            }
        } else {
            static_assert(std::is_same_v<T, int64_t>);
            value = st.i64(col++);
        }
    });
    return record;
}

/// The run's rows of R's table that `where_and_order` picks (" AND step > ?2 ORDER BY
/// step"; ?1 is the run), every field a file of `schema_version` has; `bind` binds the
/// parameters from ?2 on.
template <class R, class Bind>
std::vector<R> readRecords(sqlite3* db, const std::string& path, int schema_version, int64_t run_id,
                           const std::string& where_and_order, Bind&& bind,
                           const std::string& what) {
    const auto fields = run::fieldsInSchema(run::recordFields<R>(), schema_version);
    Statement st(db, path,
                 "SELECT " + columns(fields) + " FROM " + RecordTable<R>::name +
                     " WHERE run_id = ?1" + where_and_order,
                 what);
    st.bindInt(1, run_id);
    bind(st);
    std::vector<R> out;
    while (st.step())
        out.push_back(readFields(st, 0, fields, path, run_id));
    return out;
}

}  // namespace ampbench::store::schema
