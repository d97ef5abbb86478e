#pragma once
// One definition per spec field: its JSON key (and an older key still read), the
// member it lives in, the editor's label and one-line help, the allowed range or
// values, the key of the arm shorthand, and when it applies. JSON reading and
// writing, equality, range validation, the arm shorthand, the editor's form and
// the arms table are derived from these tables; a new field is one line here
// plus its use.
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "core/config/ExperimentSpec.h"

namespace ampbench::config {

/// Allowed values of a number (or of each number in a list): lo..hi, each end open
/// or closed; an infinite end is no bound.
struct Bounds {
    double lo = -std::numeric_limits<double>::infinity();
    bool lo_closed = true;
    double hi = std::numeric_limits<double>::infinity();
    bool hi_closed = true;
    const char* hi_text = nullptr;  ///< how a message writes hi ("2^64")

    bool any() const { return std::isfinite(lo) || std::isfinite(hi); }
    bool contains(double v) const;
    /// "between 1 and 1024", "at least 0", "greater than 0 and at most 10".
    std::string text() const;
};

/// The member a field lives in. Sections (model, data, optimizer, scaler) and the
/// list of arms are members too; their fields have tables of their own.
template <class S>
using Member =
    std::variant<int S::*, int64_t S::*, double S::*, bool S::*, std::string S::*,
                 std::vector<int> S::*, std::vector<uint64_t> S::*, std::vector<double> S::*,
                 Precision S::*, LrRule S::*, OptimizerKind S::*, DeviceKind S::*, Task S::*,
                 LrSchedule S::*, Fp8Recipe S::*, Switch S::*, ModelSpec S::*, DataSpec S::*,
                 OptimizerSpec S::*, ScalerSpec S::*, std::vector<ArmSpec> S::*>;

/// What a field is, apart from where it lives.
struct FieldInfo {
    const char* key = "";             ///< JSON key; a path segment ("model.width")
    const char* label = "";           ///< editor label
    const char* help = "";            ///< one line: tooltip, documentation
    const char* column = nullptr;     ///< short header in the arms table (default: label)
    const char* group = nullptr;      ///< editor group of a top-level field
    const char* alias = nullptr;      ///< an older JSON key, still read
    const char* shorthand = nullptr;  ///< key in the arm shorthand (`accum=4`)
    const char* zero_text = nullptr;  ///< how the editor shows (and reads) 0 ("off")
    /// A path the editor offers to browse for: "file:<filter>" or "folder".
    const char* browse = nullptr;
    Bounds bounds;                     ///< numbers, and each number of a list
    std::vector<std::string> choices;  ///< a text with a fixed set of values
    /// Validated and editable only when this holds (null: always).
    bool (*applies)(const ExperimentSpec&) = nullptr;
    /// Editable only when this holds, though always validated (null: as `applies`).
    bool (*used)(const ExperimentSpec&) = nullptr;
};

template <class S>
struct Field : FieldInfo {
    Member<S> member;

    // Each returns a copy with one more property, so a table entry reads as a chain.
    template <class V>
    Field with(V FieldInfo::*property, V value) const {
        Field f = *this;
        f.*property = std::move(value);
        return f;
    }
    Field range(double lo, double hi, bool lo_closed = true, bool hi_closed = true,
                const char* hi_text = nullptr) const {
        return with(&FieldInfo::bounds, Bounds{lo, lo_closed, hi, hi_closed, hi_text});
    }
    Field atLeast(double lo, bool closed = true) const {
        return range(lo, std::numeric_limits<double>::infinity(), closed);
    }
    Field oneOf(std::vector<std::string> values) const {
        return with(&FieldInfo::choices, std::move(values));
    }
    Field formerly(const char* old_key) const { return with(&FieldInfo::alias, old_key); }
    Field abbrev(const char* key) const { return with(&FieldInfo::shorthand, key); }
    Field zeroIs(const char* text) const { return with(&FieldInfo::zero_text, text); }
    Field browseFor(const char* what) const { return with(&FieldInfo::browse, what); }
    Field when(bool (*predicate)(const ExperimentSpec&)) const {
        return with(&FieldInfo::applies, predicate);
    }
    Field usedWhen(bool (*predicate)(const ExperimentSpec&)) const {
        return with(&FieldInfo::used, predicate);
    }
    Field in(const char* editor_group) const { return with(&FieldInfo::group, editor_group); }
    Field header(const char* column_header) const {
        return with(&FieldInfo::column, column_header);
    }
};

template <class S, class M>
Field<S> field(const char* key, M S::*member, const char* label, const char* help) {
    Field<S> f;
    f.key = key;
    f.label = label;
    f.help = help;
    f.member = member;
    return f;
}

/// The tables, in JSON order.
const std::vector<Field<ExperimentSpec>>& fieldsOf(const ExperimentSpec*);
const std::vector<Field<ModelSpec>>& fieldsOf(const ModelSpec*);
const std::vector<Field<DataSpec>>& fieldsOf(const DataSpec*);
const std::vector<Field<OptimizerSpec>>& fieldsOf(const OptimizerSpec*);
const std::vector<Field<ArmSpec>>& fieldsOf(const ArmSpec*);
const std::vector<Field<ScalerSpec>>& fieldsOf(const ScalerSpec*);
template <class S>
const std::vector<Field<S>>& fieldsOf() {
    return fieldsOf(static_cast<const S*>(nullptr));
}

/// Memberwise equality through the table (sections and arms included).
template <class S>
bool equalFields(const S& a, const S& b);

// --- enumerations: one table of names each ---

template <class E>
struct EnumName {
    E value;
    const char* name;
};
const std::vector<EnumName<Precision>>& enumNames(Precision);
const std::vector<EnumName<Fp8Recipe>>& enumNames(Fp8Recipe);
const std::vector<EnumName<LrRule>>& enumNames(LrRule);
const std::vector<EnumName<OptimizerKind>>& enumNames(OptimizerKind);
const std::vector<EnumName<DeviceKind>>& enumNames(DeviceKind);
const std::vector<EnumName<Task>>& enumNames(Task);
const std::vector<EnumName<Switch>>& enumNames(Switch);
const std::vector<EnumName<LrSchedule>>& enumNames(LrSchedule);

template <class E>
std::string enumToString(E value) {
    for (const auto& n : enumNames(E{})) {
        if (n.value == value) {
            return n.name;
        }
    }
    return enumNames(E{}).front().name;
}
template <class E>
std::optional<E> enumFromString(const std::string& text) {
    for (const auto& n : enumNames(E{})) {
        if (text == n.name) {
            return n.value;
        }
    }
    return std::nullopt;
}
template <class E>
std::vector<std::string> enumChoices() {
    std::vector<std::string> out;
    for (const auto& n : enumNames(E{})) {
        out.push_back(n.name);
    }
    return out;
}

// --- every field below a root, flattened, with its value type-erased ---

enum class ValueKind { Int, Double, Bool, Text, Choice, IntList, DoubleList };
/// Int: int64_t; Double: double; Bool: bool; Text and Choice: std::string;
/// IntList: std::vector<uint64_t>; DoubleList: std::vector<double>.
using FieldValue =
    std::variant<int64_t, double, bool, std::string, std::vector<uint64_t>, std::vector<double>>;

/// A field reached from a root through its sections: path "model.width" from an
/// ExperimentSpec, "scaler.init_scale" from an ArmSpec. The arms of an experiment
/// are not flattened into it: each arm is its own root.
template <class Root>
struct FlatField {
    std::string path;
    const FieldInfo* info = nullptr;
    ValueKind kind = ValueKind::Int;
    std::vector<std::string> choices;  ///< Choice: enum names or the field's fixed values
    std::function<FieldValue(const Root&)> get;
    /// Takes the alternative of `kind`; a Choice that names no value is ignored.
    std::function<void(Root&, const FieldValue&)> set;
};

const std::vector<FlatField<ExperimentSpec>>& flatFields(const ExperimentSpec*);
const std::vector<FlatField<ArmSpec>>& flatFields(const ArmSpec*);
template <class Root>
const std::vector<FlatField<Root>>& flatFields() {
    return flatFields(static_cast<const Root*>(nullptr));
}
/// The flattened field with this path, or null.
template <class Root>
const FlatField<Root>* findField(const std::string& path) {
    for (const auto& f : flatFields<Root>()) {
        if (f.path == path) {
            return &f;
        }
    }
    return nullptr;
}

}  // namespace ampbench::config
