#pragma once
// Each metric record's fields, declared once: the name (the SQL column, the record
// stream's JSON key, the export's header and metric name), the type, and where the
// value lives. The store's inserts and reads, the stream's encoder and decoder and the
// export are written over these lists, so a new step column is one line here plus its
// migration (core/store/Schema.cpp).
#include <cstdint>
#include <variant>
#include <vector>

#include "core/run/Records.h"

namespace ampbench::run {

template <class R>
struct RecordField {
    const char* name;
    std::variant<int64_t R::*, double R::*, bool R::*> member;
    /// A measurement the export's metric rows list: the step and the samples are their
    /// keys, a flag such as `timed` is no metric.
    bool metric = true;
};

/// Every field of a step, in the table's column order (the run and seq are keys).
const std::vector<RecordField<StepRecord>>& stepFields();
/// Every field of an evaluation, in the table's column order.
const std::vector<RecordField<EvalRecord>>& evalFields();

/// Calls `f(field, value)` for each field of `record`, with the value as int64_t&,
/// double& or bool& (const for a const record), in order.
template <class R, class Record, class F>
void visitFields(const std::vector<RecordField<R>>& fields, Record& record, F&& f) {
    for (const auto& field : fields) {
        std::visit([&](auto member) { f(field, record.*member); }, field.member);
    }
}

}  // namespace ampbench::run
