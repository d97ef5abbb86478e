#pragma once
// Checksums of what a run reads from disk (run::InputFile), with zlib's CRC-32.
#include <cstdint>
#include <string>
#include <vector>

#include "core/config/ExperimentSpec.h"
#include "core/run/InputFiles.h"

namespace ampbench::data {

/// Folders holding more bytes than this are recorded by listing, not by content.
inline constexpr int64_t kContentLimit = int64_t(4) << 30;

/// Records every file the spec makes a run read: model.file, data.dir (the default
/// Fashion-MNIST folder when the spec names none), data.path, data.labels and
/// data.val_path. Synthetic data records nothing.
std::vector<run::InputFile> recordInputs(const config::ExperimentSpec& spec);

/// One file or folder (`limit`: the content limit for folders).
run::InputFile recordInput(const std::string& field, const std::string& path,
                           int64_t limit = kContentLimit);

}  // namespace ampbench::data
