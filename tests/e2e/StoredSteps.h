#pragma once
// What a training process has stored so far, read from its database while it trains:
// what the end-to-end tests wait for before they hold it or cut its link.
#include <cstdint>
#include <exception>
#include <filesystem>
#include <optional>
#include <string>

#include "core/store/Database.h"

namespace ampbench::test {

/// The steps the first run (of `experiment`, where given) in database `db` has stored;
/// 0 while there is no database, no run or no step yet.
inline int64_t firstRunSteps(const std::string& db,
                             std::optional<int64_t> experiment = std::nullopt) {
    try {
        if (!std::filesystem::exists(db)) {
            return 0;
        }
        auto d = store::Database::open(db, store::Database::Mode::ReadOnly);
        const auto runs = d->runs(experiment);
        return runs.empty() ? 0 : d->stepCount(runs.front().id);
    } catch (const std::exception&) {
        return 0;  // not created yet, or mid-creation
    }
}

}  // namespace ampbench::test
