#pragma once
// What a run's memory figures measure, read back from its stored environment (the
// trainer writes it as probe::Environment's `memory`; runs recorded before it, and
// training scripts, say nothing: the device's default then).
#include <string>
#include <vector>

namespace ampbench::analysis {

enum class MemoryMeasure {
    Allocator,  ///< CUDA: the caching allocator's bytes in tensors
    Tensors,    ///< CPU: the bytes the run's own tensors held
    Resident,   ///< CPU: the process's resident set (everything the program holds)
};

/// From a run's environment JSON; Resident for a CPU run that does not say, Allocator
/// for a CUDA one.
MemoryMeasure memoryMeasure(const std::string& env_json);

/// A column's title over runs measured so: "peak allocated", "peak in tensors",
/// "peak RSS"; "peak memory" when they were measured differently.
std::string memoryLabel(const std::vector<MemoryMeasure>& measures);

}  // namespace ampbench::analysis
