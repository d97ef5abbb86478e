#pragma once
// What this binary is: written at build time (cmake/BuildInfo.cmake).

namespace ampbench::config {

/// The project version, e.g. "0.1.0".
const char* buildVersion();
/// The git commit the binary was built from (12 hex digits, "-dirty" when tracked
/// files differed from it), or "unknown" when built outside a git checkout.
const char* buildCommit();
/// CMake's build type: Release, RelWithDebInfo, Debug, ...
const char* buildType();

}  // namespace ampbench::config
