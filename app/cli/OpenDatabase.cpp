#include "cli/OpenDatabase.h"

#include "cli/Terminal.h"
#include "core/store/StoreError.h"

namespace ampbench::cli {

std::unique_ptr<store::Database> openOrSay(const std::string& path, store::Database::Mode mode) {
    try {
        return store::Database::open(path, mode);
    } catch (const store::StoreError& e) {
        say(stderr, "%s\n", e.what());
        return nullptr;
    }
}

}  // namespace ampbench::cli
