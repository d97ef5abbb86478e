#include "core/run/RecordFields.h"

namespace ampbench::run {

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

}  // namespace ampbench::run
