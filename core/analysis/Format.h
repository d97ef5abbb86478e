#pragma once
// Text formatting of figures for tables and reports. Pure functions.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/util/Format.h"

namespace ampbench::analysis {

using util::formatBytes;                     ///< "1.23 GiB", "512 KiB"; "–" for 0
std::string formatMs(double ms);             ///< "12.3 ms", "1.20 s"; "–" for NaN
std::string formatDuration(double seconds);  ///< "1:02:03" or "2:03"
std::string formatRatio(double ratio);       ///< "1.23×"; "–" for NaN
std::string formatPercent(double fraction, int decimals = 1);  ///< "87.3%"
std::string formatNumber(double value, int decimals);          ///< fixed; "–" for NaN
std::string formatSignificant(double value, int digits);       ///< "0.175", "1e-08" (%g)

/// "8G", "512M", "1.5GiB", "64k", "1073741824" → bytes (binary units); nullopt if malformed.
std::optional<int64_t> parseByteSize(const std::string& text);

/// A plain-text table with aligned columns (UTF-8 aware for width).
/// Text safe to print on a terminal: control characters (escape sequences, C1
/// controls, and line breaks unless `keep_newlines`) and bytes that are not UTF-8
/// are shown as \xNN, and the bidirectional controls (U+202A-U+202E, U+2066-U+2069,
/// U+200E, U+200F, U+061C) as \uXXXX, so a name stored by anyone cannot move the
/// cursor, retitle the window, hide output or reorder the line.
std::string printable(const std::string& text, bool keep_newlines = true);

class TextTable {
  public:
    explicit TextTable(std::vector<std::string> header);
    void addRow(std::vector<std::string> cells);
    /// Right-align these columns (numbers).
    void alignRight(std::vector<size_t> columns);
    std::string render() const;
    /// Tab-separated, for the clipboard and spreadsheets.
    std::string renderTsv() const;

  private:
    std::vector<std::string> header_;
    std::vector<std::vector<std::string>> rows_;
    std::vector<bool> right_;
};

/// Display width of a UTF-8 string (code points; no wide characters expected).
size_t displayWidth(const std::string& text);

}  // namespace ampbench::analysis
