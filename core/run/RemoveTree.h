#pragma once
#include <string>

namespace ampbench::run {

/// Removes a file, or a folder with everything under it (symbolic links themselves,
/// never what they point to). Missing paths and entries that cannot be removed are
/// skipped; false when anything is left. Not std::filesystem::remove_all: PyTorch's
/// pip libtorch.so exports its own copy of it, which programs linking that library
/// bind to and which crashed there.
bool removeTree(const std::string& path) noexcept;

}  // namespace ampbench::run
