#pragma once
// This program's own path, for the processes it starts of itself (detached jobs, rank
// workers, Slurm tasks) and for what sits beside it (the Python package).
#include <string>

namespace ampbench::util {

/// The path of the running program (/proc/self/exe); empty when it cannot be read.
std::string ownExecutable();

}  // namespace ampbench::util
