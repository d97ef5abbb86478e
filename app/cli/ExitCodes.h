#pragma once

namespace ampbench::cli {

/// What the process exit status says (documented in the README).
enum ExitCode : int {
    kOk = 0,                 ///< every run finished
    kRunsFailed = 1,         ///< at least one run failed (out of memory, NaN, error)
    kUsage = 2,              ///< unknown flag or preset, invalid spec
    kDataMissing = 3,        ///< dataset not found or unreadable
    kStoreError = 4,         ///< database cannot be opened, is foreign or newer
    kNotFound = 5,           ///< no such run or experiment
    kIoError = 6,            ///< an output file cannot be written
    kChanged = 7,            ///< rerun refused: its files or environment changed (--force)
    kStreamIncomplete = 8,   ///< ingest: a malformed line or a gap (reported; the rest kept)
    kStreamRefused = 9,      ///< ingest: not a stream, or a version this build does not read
    kNothingFits = 10,       ///< advise: no format trains even batch 1 (searches recorded)
    kNoMixedPrecision = 11,  ///< advise: no mixed precision trains here (fp32 advised)
    kBudgetTooSmall = 12,    ///< advise: the time budget holds no candidate (nothing recorded)
    kScriptRefused = 13,     ///< advise --script: the script did not take a candidate's settings
    kCancelled = 130,        ///< interrupted (Ctrl-C); rows up to then are kept
};

}  // namespace ampbench::cli
