#include "ui/MetaTypes.h"

#include <QList>

namespace ampbench::ui {

void registerMetaTypes() {
    qRegisterMetaType<ampbench::config::ExperimentSpec>();
    qRegisterMetaType<ampbench::run::RunStatus>();
    qRegisterMetaType<ampbench::train::SetupReport>();
    qRegisterMetaType<QList<qint64>>();
}

}  // namespace ampbench::ui
