#include "core/run/RemoveTree.h"

#include <filesystem>
#include <system_error>

namespace ampbench::run {
namespace {

namespace fs = std::filesystem;

void removeUnder(const fs::path& p) noexcept {
    std::error_code ec;
    if (fs::is_directory(fs::symlink_status(p, ec))) {
        for (fs::directory_iterator it(p, ec), end; !ec && it != end; it.increment(ec)) {
            removeUnder(it->path());
        }
    }
    fs::remove(p, ec);
}

}  // namespace

bool removeTree(const std::string& path) noexcept {
    try {
        removeUnder(path);
        std::error_code ec;
        return !fs::exists(fs::symlink_status(path, ec));
    } catch (...) {  // an allocation failing while paths are built
        return false;
    }
}

}  // namespace ampbench::run
