#pragma once
// The files a run read, as recorded with it (data::recordInputs computes them): each
// file's or folder's size and CRC-32, so that a rerun can tell whether they changed.
#include <cstdint>
#include <string>
#include <vector>

#include "core/run/FileKind.h"  // refuseUnlessRegular, openRegularFile: every reader uses them

namespace ampbench::run {

struct InputFile {
    std::string field;  ///< the spec field that names it: "data.path", "model.file", ...
    std::string path;   ///< as the spec gives it (the default dataset folder resolved)
    /// "file", "folder", "missing", or "special" (a FIFO, a device: never read).
    std::string kind;
    /// "content": every byte went into the checksum; "listing": the folder was larger
    /// than the content limit, so names, sizes and modification times did instead;
    /// "sampled": the file was larger than the sampling limit, so its size, modification
    /// time, first bytes (the header) and evenly spaced blocks did. For "special", what
    /// the path is ("a FIFO").
    std::string method;
    int64_t files = 0;
    int64_t bytes = 0;
    std::string checksum;  ///< 8 hex digits

    bool operator==(const InputFile& o) const {
        return field == o.field && kind == o.kind && method == o.method && files == o.files &&
               bytes == o.bytes && checksum == o.checksum;
    }
};

/// The record as JSON; a path that is not UTF-8 is written with U+FFFD for its bad
/// bytes (JSON cannot hold them), which the comparison does not look at.
std::string inputsToJson(const std::vector<InputFile>& inputs);
/// Empty for empty or unreadable text; a field of the wrong type reads as its default
/// (inputsProblem names it).
std::vector<InputFile> inputsFromJson(const std::string& json);
/// Why `json`, a run's record of its files, cannot be read, as words that follow the
/// record's name (" is not JSON", ": [0].path = 7: expected a string"); empty when it
/// can (or is empty: recorded before this version).
std::string inputsProblem(const std::string& json);

/// One sentence per input that differs between then and now ("data.path x.npz changed:
/// 1200 bytes, CRC-32 0a1b2c3d then; 1300 bytes, CRC-32 ... now"); empty when all agree.
std::vector<std::string> inputDifferences(const std::vector<InputFile>& then,
                                          const std::vector<InputFile>& now);

/// "CRC-32 0a1b2c3d", "CRC-32 0a1b2c3d of the listing", "... of size, time and samples".
std::string describeChecksum(const InputFile& f);

}  // namespace ampbench::run
