#include "core/util/OwnExecutable.h"

#include <filesystem>
#include <system_error>

namespace ampbench::util {

std::string ownExecutable() {
    std::error_code ec;
    const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
    return ec ? std::string() : self.string();
}

}  // namespace ampbench::util
