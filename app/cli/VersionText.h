#pragma once
// What `ampbench-cli --version` prints: the version, the git commit and build type
// of this binary, and the LibTorch, CUDA and Qt it runs with.
#include <string>

namespace ampbench::cli {

/// Several lines, the first "ampbench-cli VERSION"; no newline at the end.
std::string versionText();

}  // namespace ampbench::cli
