#include "core/store/Paths.h"

#include <cstdlib>
#include <filesystem>

namespace ampbench::store {

std::string defaultDatabasePath() {
    std::filesystem::path base;
    if (const char* xdg = std::getenv("XDG_DATA_HOME"); xdg && *xdg) {
        base = xdg;
    } else if (const char* home = std::getenv("HOME"); home && *home) {
        base = std::filesystem::path(home) / ".local" / "share";
    } else {
        base = std::filesystem::temp_directory_path();
    }
    return (base / "ampbench" / "ampbench.db").string();
}

}  // namespace ampbench::store
