#pragma once
// A model the user saved from Python as TorchScript (torch.jit.script or
// torch.jit.trace, then .save). The file is read once per process and every run
// loads its own copy from those bytes, so every arm and seed starts from the same
// weights and differs only in what the arm changes.
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <c10/core/Device.h>

#include "core/models/Models.h"

namespace ampbench::models {

/// A model file that cannot be read or cannot be trained as asked; names the file.
class ModelError : public std::runtime_error {
  public:
    explicit ModelError(const std::string& message) : std::runtime_error(message) {}
};

/// What the file holds, before any training.
struct ScriptedFile {
    std::string path;
    int64_t bytes = 0;
    uint32_t crc32 = 0;  ///< of the file's bytes: tells two versions of a file apart
    /// Train/eval-dependent modules (Dropout, BatchNorm, ...) whose forward does not
    /// read `training`: a traced module froze them in the mode it was traced in.
    std::vector<std::string> frozen;
};

/// Loads a copy of the module in `path` onto `device`, in training mode, with the
/// graph executor's optimisations off (a fuser could hide ops from autocast).
/// Throws ModelError naming the file when it cannot be read.
std::shared_ptr<Network> loadScripted(const std::string& path, const c10::Device& device);

/// Facts about the file (read through the same cache as loadScripted).
ScriptedFile inspectScripted(const std::string& path);

/// Writes a scripted network's module (its trained weights) to `path` atomically,
/// after moving it to the CPU (call it when training is over). Throws
/// std::invalid_argument for a built-in network.
void saveScripted(Network& model, const std::string& path);

/// "net.pt (129.7 KiB, CRC-32 020d50ef)": which version of the file a run trained.
std::string describe(const ScriptedFile& file);

/// "…frozen…" advice for a traced module, or "" when nothing was frozen.
std::string frozenAdvice(const ScriptedFile& file);

}  // namespace ampbench::models
