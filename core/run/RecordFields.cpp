#include "core/run/RecordFields.h"

#include <stdexcept>

namespace ampbench::run {

NumericsKind EnumText<NumericsKind>::parse(const std::string& text) {
    if (const auto kind = numericsKindFromString(text))
        return *kind;
    throw std::invalid_argument("unknown numerics kind \"" + text +
                                "\" (expected grad, activation, cast)");
}

const std::vector<RecordField<StepRecord>>& stepFields() {
    using S = StepRecord;
    static const std::vector<RecordField<S>> fields = {
        {"step", &S::step, false},
        {"samples", &S::samples, false},
        {"loss", &S::loss},
        {"lr", &S::lr},
        {"loss_scale", &S::loss_scale},
        {"skipped", &S::skipped},
        {"grad_norm", &S::grad_norm},
        {"step_ms", &S::step_ms},
        {"data_wait_ms", &S::data_wait_ms},
        {"timed", &S::timed, false},
        {"mem_allocated", &S::mem_allocated},
        {"mem_reserved", &S::mem_reserved},
        {"mem_peak", &S::mem_peak},
        {"wall_s", &S::wall_s},
    };
    return fields;
}

const std::vector<RecordField<EvalRecord>>& evalFields() {
    using E = EvalRecord;
    static const std::vector<RecordField<E>> fields = {
        {"step", &E::step, false},     {"samples", &E::samples, false},
        {"val_loss", &E::val_loss},    {"val_accuracy", &E::val_accuracy},
        {"wall_s", &E::wall_s, false},
    };
    return fields;
}

// The export lists an event as one line (its kind, its value), not a line per field.
const std::vector<RecordField<EventRecord>>& eventFields() {
    using V = EventRecord;
    static const std::vector<RecordField<V>> fields = {
        {"step", &V::step, false},
        {"kind", &V::kind, false},
        {"message", &V::message, false},
        {"value", &V::value},
    };
    return fields;
}

// The export's metric lines follow this order; dtype is no metric line.
const std::vector<RecordField<NumericsRecord>>& numericsFields() {
    using N = NumericsRecord;
    static const std::vector<RecordField<N>> fields = {
        {"step", &N::step, false},
        {"kind", &N::kind, false},
        {"name", &N::name, false},
        {"absmax", &N::absmax},
        {"underflow_subnormal", &N::underflow_subnormal},
        {"underflow_normal", &N::underflow_normal},
        {"saturated", &N::saturated, true, 12},
        {"headroom_log2", &N::headroom_log2},
        {"nonfinite", &N::nonfinite},
        {"numel", &N::numel},
        {"loss_scale", &N::loss_scale},
        {"scale", &N::scale, true, 12},
        {"format", &N::format, true, 12},
        {"dtype", &N::dtype, false},
    };
    return fields;
}

}  // namespace ampbench::run
