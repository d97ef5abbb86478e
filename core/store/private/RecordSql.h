#pragma once
// SQL over the record field tables (run/RecordFields.h): the column list, the
// placeholders, binding a record and reading one back, in the table's order.
#include <string>
#include <type_traits>
#include <vector>

#include "core/run/RecordFields.h"
#include "core/store/private/Schema.h"

namespace ampbench::store::schema {

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

/// "VERB INTO table(run_id, the fields, seq) VALUES(?1, ...)": run_id is ?1, the
/// fields follow from ?2, seq is the last.
template <class R>
std::string insertSql(const char* verb, const char* table,
                      const std::vector<run::RecordField<R>>& fields) {
    return std::string(verb) + " INTO " + table + "(run_id, " + columns(fields) + ", seq) VALUES(" +
           placeholders(1, fields.size() + 2) + ")";
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
        } else {
            st.bindInt(i++, value);
        }
    });
    return i;
}

/// A record from columns first, first + 1, ... of the current row.
template <class R>
R readFields(const Statement& st, int first, const std::vector<run::RecordField<R>>& fields) {
    R record;
    int col = first;
    run::visitFields(fields, record, [&](const auto&, auto& value) {
        using T = std::decay_t<decltype(value)>;
        if constexpr (std::is_same_v<T, double>) {
            value = st.real(col++);
        } else if constexpr (std::is_same_v<T, bool>) {
            value = st.i64(col++) != 0;
        } else {
            value = st.i64(col++);
        }
    });
    return record;
}

}  // namespace ampbench::store::schema
