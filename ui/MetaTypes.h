#pragma once
// Core types that cross the worker/GUI thread boundary in queued signals.
#include <QMetaType>

#include "core/config/ExperimentSpec.h"
#include "core/run/Records.h"
#include "core/train/SetupCheck.h"

Q_DECLARE_METATYPE(ampbench::config::ExperimentSpec)
Q_DECLARE_METATYPE(ampbench::run::RunStatus)
Q_DECLARE_METATYPE(ampbench::train::SetupReport)

namespace ampbench::ui {

/// Registers the types above (and the containers the worker emits); idempotent.
void registerMetaTypes();

}  // namespace ampbench::ui
