// What is read from the field tables: a field's bounds and their words, equality field
// by field, and the flattened fields (a path, a kind, a getter and a setter per leaf).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <type_traits>

#include "core/config/SpecFields.h"

namespace ampbench::config {
namespace {

/// Bounds in messages: integral values without a fraction ("10", not "10.0").
std::string boundText(double v) {
    if (std::abs(v) < 1e15 && v == std::floor(v)) {
        return std::to_string(static_cast<int64_t>(v));
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return buf;
}

}  // namespace

// --- bounds ---

bool Bounds::contains(double v) const {
    const bool above = !std::isfinite(lo) || (lo_closed ? v >= lo : v > lo);
    const bool below = !std::isfinite(hi) || (hi_closed ? v <= hi : v < hi);
    return above && below;
}

std::string Bounds::text() const {
    const std::string h = hi_text ? hi_text : boundText(hi);
    if (!std::isfinite(hi)) {
        return (lo_closed ? "at least " : "greater than ") + boundText(lo);
    }
    if (!std::isfinite(lo)) {
        return (hi_closed ? "at most " : "less than ") + h;
    }
    if (lo_closed && hi_closed) {
        return "between " + boundText(lo) + " and " + h;
    }
    return (lo_closed ? "at least " : "greater than ") + boundText(lo) +
           (hi_closed ? " and at most " : " and less than ") + h;
}

// --- equality ---

namespace {
template <class T>
constexpr bool isSection = std::is_same_v<T, ModelSpec> || std::is_same_v<T, DataSpec> ||
                           std::is_same_v<T, OptimizerSpec> || std::is_same_v<T, ScalerSpec>;
template <class T>
constexpr bool isEnum = std::is_enum_v<T>;
}  // namespace

template <class S>
bool equalFields(const S& a, const S& b) {
    for (const auto& f : fieldsOf<S>()) {
        const bool same = std::visit(
            [&](auto m) {
                using T = std::remove_cv_t<std::remove_reference_t<decltype(a.*m)>>;
                if constexpr (isSection<T>) {
                    return equalFields(a.*m, b.*m);
                } else {
                    return a.*m == b.*m;
                }
            },
            f.member);
        if (!same) {
            return false;
        }
    }
    return true;
}
template bool equalFields(const ExperimentSpec&, const ExperimentSpec&);
template bool equalFields(const ModelSpec&, const ModelSpec&);
template bool equalFields(const DataSpec&, const DataSpec&);
template bool equalFields(const OptimizerSpec&, const OptimizerSpec&);
template bool equalFields(const ArmSpec&, const ArmSpec&);
template bool equalFields(const ScalerSpec&, const ScalerSpec&);

// --- flattening ---

namespace {

template <class Root, class T>
FlatField<Root> flatLeaf(std::string path, const FieldInfo& info, std::function<T&(Root&)> access) {
    FlatField<Root> f;
    f.path = std::move(path);
    f.info = &info;
    auto ref = [access](const Root& r) -> const T& { return access(const_cast<Root&>(r)); };
    if constexpr (std::is_same_v<T, int> || std::is_same_v<T, int64_t>) {
        f.kind = ValueKind::Int;
        f.get = [ref](const Root& r) { return FieldValue(static_cast<int64_t>(ref(r))); };
        // Saturated, never wrapped: 2^32 + 64 given to an int field must not read as 64
        // (the range check then names the value as too large).
        f.set = [access](Root& r, const FieldValue& v) {
            const int64_t x = std::get<int64_t>(v);
            access(r) = static_cast<T>(std::clamp<int64_t>(x, std::numeric_limits<T>::min(),
                                                           std::numeric_limits<T>::max()));
        };
    } else if constexpr (std::is_same_v<T, double>) {
        f.kind = ValueKind::Double;
        f.get = [ref](const Root& r) { return FieldValue(ref(r)); };
        f.set = [access](Root& r, const FieldValue& v) { access(r) = std::get<double>(v); };
    } else if constexpr (std::is_same_v<T, bool>) {
        f.kind = ValueKind::Bool;
        f.get = [ref](const Root& r) { return FieldValue(ref(r)); };
        f.set = [access](Root& r, const FieldValue& v) { access(r) = std::get<bool>(v); };
    } else if constexpr (std::is_same_v<T, std::string>) {
        f.kind = info.choices.empty() ? ValueKind::Text : ValueKind::Choice;
        f.choices = info.choices;
        f.get = [ref](const Root& r) { return FieldValue(ref(r)); };
        f.set = [access](Root& r, const FieldValue& v) { access(r) = std::get<std::string>(v); };
    } else if constexpr (isEnum<T>) {
        f.kind = ValueKind::Choice;
        f.choices = enumChoices<T>();
        f.get = [ref](const Root& r) { return FieldValue(enumToString(ref(r))); };
        f.set = [access](Root& r, const FieldValue& v) {
            if (auto e = enumFromString<T>(std::get<std::string>(v))) {
                access(r) = *e;
            }
        };
    } else if constexpr (std::is_same_v<T, std::vector<double>>) {
        f.kind = ValueKind::DoubleList;
        f.get = [ref](const Root& r) { return FieldValue(ref(r)); };
        f.set = [access](Root& r, const FieldValue& v) {
            access(r) = std::get<std::vector<double>>(v);
        };
    } else {  // lists of integers
        using Item = typename T::value_type;
        f.kind = ValueKind::IntList;
        f.get = [ref](const Root& r) {
            const T& list = ref(r);
            return FieldValue(std::vector<uint64_t>(list.begin(), list.end()));
        };
        f.set = [access](Root& r, const FieldValue& v) {
            T out;
            for (uint64_t x : std::get<std::vector<uint64_t>>(v)) {
                out.push_back(static_cast<Item>(std::min<uint64_t>(
                    x, static_cast<uint64_t>(std::numeric_limits<Item>::max()))));
            }
            access(r) = std::move(out);
        };
    }
    return f;
}

template <class Root, class S>
void flatten(std::vector<FlatField<Root>>& out, const std::string& prefix,
             std::function<S&(Root&)> access) {
    for (const Field<S>& field : fieldsOf<S>()) {
        std::visit(
            [&](auto m) {
                using T = std::remove_reference_t<decltype(std::declval<S&>().*m)>;
                const std::string path = prefix + field.key;
                std::function<T&(Root&)> member = [access, m](Root& r) -> T& {
                    return access(r).*m;
                };
                if constexpr (isSection<T>) {
                    flatten<Root, T>(out, path + ".", member);
                } else if constexpr (!std::is_same_v<T, std::vector<ArmSpec>>) {
                    out.push_back(flatLeaf<Root, T>(path, field, member));
                }
            },
            field.member);
    }
}

template <class Root>
std::vector<FlatField<Root>> flattenRoot() {
    std::vector<FlatField<Root>> out;
    flatten<Root, Root>(out, "", [](Root& r) -> Root& { return r; });
    return out;
}

}  // namespace

const std::vector<FlatField<ExperimentSpec>>& flatFields(const ExperimentSpec*) {
    static const std::vector<FlatField<ExperimentSpec>> fields = flattenRoot<ExperimentSpec>();
    return fields;
}

const std::vector<FlatField<ArmSpec>>& flatFields(const ArmSpec*) {
    static const std::vector<FlatField<ArmSpec>> fields = flattenRoot<ArmSpec>();
    return fields;
}

}  // namespace ampbench::config
