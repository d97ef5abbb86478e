#pragma once
// A CSV table with a header row: numeric feature columns and one label column.
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>
#include <vector>

namespace ampbench::data {

struct CsvTable {
    std::string path;
    std::vector<std::string> columns;  ///< the header row
    size_t label = 0;                  ///< the label's column
    at::Tensor features;               ///< float32 N×F, the other columns in order
    std::vector<std::string> labels;   ///< the label cells as written
    std::vector<int64_t> lines;        ///< each row's line in the file (1-based)
};

/// Reads the whole table. `label_column`: a header name or a 0-based index; empty:
/// the last column. Blank lines are skipped. Throws DataError naming the file (and
/// the line) for a missing header, a row with the wrong number of fields, a
/// feature cell that is not a finite number, or no rows.
CsvTable readCsv(const std::string& path, const std::string& label_column);

/// The label cells of one or more tables (training first), as targets.
struct CsvLabels {
    std::vector<at::Tensor> targets;  ///< one per table
    /// Names of the classes when the labels are words (the targets index into it).
    std::vector<std::string> class_names;
};

/// Every cell an integer: int64 class labels (DataError naming the line of a
/// negative one). Every cell a number: float32 regression targets. No cell a
/// number: class names, sorted, over all tables. Otherwise DataError naming the
/// first cell that is not a number.
CsvLabels csvLabels(const std::vector<const CsvTable*>& tables);

}  // namespace ampbench::data
