#pragma once
// A record as a JSON object of its fields, for the export and the record stream; each
// says how it writes a double that JSON cannot hold (NaN, the infinities).
#include <nlohmann/json.hpp>
#include <type_traits>
#include <vector>

#include "core/run/RecordFields.h"

namespace ampbench::run {

/// Every field of `record` by its name: doubles through `real`, enumerations as their
/// names, the rest as they are.
template <class R, class Real>
nlohmann::json fieldsJson(const std::vector<RecordField<R>>& fields, const R& record, Real real) {
    nlohmann::json j = nlohmann::json::object();
    visitFields(fields, record, [&](const auto& f, const auto& value) {
        using T = std::decay_t<decltype(value)>;
        if constexpr (std::is_same_v<T, double>) {
            j[f.name] = real(value);
        } else if constexpr (std::is_enum_v<T>) {
            j[f.name] = EnumText<T>::text(value);
        } else {
            j[f.name] = value;
        }
    });
    return j;
}

}  // namespace ampbench::run
