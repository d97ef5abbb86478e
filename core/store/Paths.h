#pragma once
#include <string>

namespace ampbench::store {

/// $XDG_DATA_HOME/ampbench/ampbench.db, or ~/.local/share/ampbench/ampbench.db.
std::string defaultDatabasePath();

}  // namespace ampbench::store
