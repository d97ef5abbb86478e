#pragma once
// Opening the database a command names, or saying why not: one message for every
// command (a damaged, foreign or newer file, or one that cannot be written).
#include <memory>
#include <string>

#include "core/store/Database.h"

namespace ampbench::cli {

/// The database at `path`, or null after the reason is said on stderr (the caller
/// then exits with kStoreError).
std::unique_ptr<store::Database> openOrSay(
    const std::string& path, store::Database::Mode mode = store::Database::Mode::ReadWrite);

}  // namespace ampbench::cli
