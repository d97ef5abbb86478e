#pragma once
// Core types that cross the worker/GUI thread boundary in queued signals.
#include <QMetaType>

#include "core/config/ExperimentSpec.h"
#include "core/run/Records.h"

Q_DECLARE_METATYPE(ampbench::config::ExperimentSpec)
Q_DECLARE_METATYPE(ampbench::run::RunStatus)

namespace ampbench::ui {

/// Registers the types above (and the containers the worker emits); idempotent.
void registerMetaTypes();

}  // namespace ampbench::ui
