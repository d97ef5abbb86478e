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
/// Files larger than this are recorded by sampling ("sampled"): their size,
/// modification time, first block and evenly spaced blocks, not every byte.
inline constexpr int64_t kSampleAbove = int64_t(256) << 20;
inline constexpr int64_t kSampledBlocks = 64;
inline constexpr int64_t kSampledBlockBytes = int64_t(64) << 10;

/// Records every file the spec makes a run read: model.file, data.dir (the default
/// Fashion-MNIST folder when the spec names none), data.path, data.labels and
/// data.val_path. Synthetic data records nothing.
std::vector<run::InputFile> recordInputs(const config::ExperimentSpec& spec);

/// One file or folder (`limit`: the content limit for folders; `sample_above`: the
/// size above which a file is sampled). A FIFO or a device is recorded as "special"
/// and never opened.
run::InputFile recordInput(const std::string& field, const std::string& path,
                           int64_t limit = kContentLimit, int64_t sample_above = kSampleAbove);

}  // namespace ampbench::data
