#pragma once
// Datasets read from the user's files: NumPy arrays (.npz, or .npy pairs), image
// folders (one sub-folder per class) and CSV tables. Each splits off a validation
// part (a seeded fraction, the same for every run, or the files in val_path) and
// reads its samples on the prefetcher's thread.
#include <memory>

#include "core/config/ExperimentSpec.h"
#include "core/data/Datasets.h"

namespace ampbench::data {

/// data.name "arrays": `path` is an .npz holding `x` and `y` (and optionally `x_val`
/// and `y_val`), or the inputs' .npy with the labels in `labels` (empty: the same
/// name with the last "x" of the file name replaced by "y"). An .npy is memory-mapped.
std::shared_ptr<const Dataset> openArrays(const config::DataSpec& spec);

/// data.name "image-folder": `path` holds one sub-folder per class (sorted by name;
/// the class index is the position), each with PNG or JPEG files, decoded per batch.
std::shared_ptr<const Dataset> openImageFolder(const config::DataSpec& spec);

/// data.name "csv": `path` is a table with a header row, numeric feature columns and
/// one label column (`label_column`, default the last).
std::shared_ptr<const Dataset> openCsv(const config::DataSpec& spec);

}  // namespace ampbench::data
