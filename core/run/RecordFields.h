#pragma once
// Each record's fields, declared once: the name (the SQL column, the record stream's
// JSON key, the export's header and metric name), the type, where the value lives and
// the schema that added it. The store's inserts and reads (run rows, sequence reads,
// numerics), the stream's encoder and decoder and the export are written over these
// lists, so a new step column is one line here plus its migration (core/store/Schema.cpp).
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "core/run/Numerics.h"
#include "core/run/Records.h"

namespace ampbench::run {

/// How an enumeration field is spelled as text (in the store, the stream and the
/// export): text(value), and parse(text), which throws std::invalid_argument naming
/// the text and the names allowed. `what` names the enumeration in messages.
template <class E>
struct EnumText;

template <>
struct EnumText<EventKind> {
    static constexpr const char* what = "event kind";
    static std::string text(EventKind kind) { return toString(kind); }
    static EventKind parse(const std::string& text) { return eventKindFromString(text); }
};

template <>
struct EnumText<NumericsKind> {
    static constexpr const char* what = "numerics kind";
    static std::string text(NumericsKind kind) { return toString(kind); }
    static NumericsKind parse(const std::string& text);
};

template <class R>
struct RecordField {
    const char* name;
    std::variant<int64_t R::*, double R::*, bool R::*, std::string R::*, EventKind R::*,
                 NumericsKind R::*>
        member;
    /// A measurement the export's metric lines list: the step, the samples and a row's
    /// keys are no metric, nor is a flag such as `timed`.
    bool metric = true;
    /// The schema that added the column (0: there from the first). A file of an older
    /// schema (read-only) and a stream from a writer before it lack it: the record
    /// keeps its default value then.
    int since = 0;
};

/// Every field of a step, in the table's column order (the run and seq are keys).
const std::vector<RecordField<StepRecord>>& stepFields();
/// Every field of an evaluation, in the table's column order.
const std::vector<RecordField<EvalRecord>>& evalFields();
/// Every field of an event (table `events`).
const std::vector<RecordField<EventRecord>>& eventFields();
/// Every field of a per-layer numerics row (table `numerics`), in the order the
/// export lists its metrics.
const std::vector<RecordField<NumericsRecord>>& numericsFields();

/// The fields of a record type: recordFields<StepRecord>() is stepFields(), ...
template <class R>
const std::vector<RecordField<R>>& recordFields();
template <>
inline const std::vector<RecordField<StepRecord>>& recordFields<StepRecord>() {
    return stepFields();
}
template <>
inline const std::vector<RecordField<EvalRecord>>& recordFields<EvalRecord>() {
    return evalFields();
}
template <>
inline const std::vector<RecordField<EventRecord>>& recordFields<EventRecord>() {
    return eventFields();
}
template <>
inline const std::vector<RecordField<NumericsRecord>>& recordFields<NumericsRecord>() {
    return numericsFields();
}

/// Calls `f(field, value)` for each field of `record`, with the value as int64_t&,
/// double&, bool&, std::string& or the enumeration (const for a const record), in order.
template <class R, class Record, class F>
void visitFields(const std::vector<RecordField<R>>& fields, Record& record, F&& f) {
    for (const auto& field : fields) {
        std::visit([&](auto member) { f(field, record.*member); }, field.member);
    }
}

/// The fields of `fields` that a file of schema `schema_version` has.
template <class R>
std::vector<RecordField<R>> fieldsInSchema(const std::vector<RecordField<R>>& fields,
                                           int schema_version) {
    std::vector<RecordField<R>> out;
    for (const auto& f : fields) {
        if (f.since <= schema_version)
            out.push_back(f);
    }
    return out;
}

}  // namespace ampbench::run
