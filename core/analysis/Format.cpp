#include "core/analysis/Format.h"

#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>

#include "core/store/OutputFile.h"
#include "core/util/Utf8.h"

namespace ampbench::analysis {
namespace {
const char* kDash = "\xE2\x80\x93";  // en dash
}

std::string formatMs(double ms) {
    if (!std::isfinite(ms)) {
        return kDash;
    }
    char buf[32];
    if (ms >= 1000.0) {
        std::snprintf(buf, sizeof buf, "%.2f s", ms / 1000.0);
    } else if (ms >= 100.0) {
        std::snprintf(buf, sizeof buf, "%.0f ms", ms);
    } else if (ms >= 10.0) {
        std::snprintf(buf, sizeof buf, "%.1f ms", ms);
    } else {
        std::snprintf(buf, sizeof buf, "%.2f ms", ms);
    }
    return buf;
}

std::string formatDuration(double seconds) {
    if (!std::isfinite(seconds) || seconds < 0) {
        return kDash;
    }
    auto total = static_cast<long>(std::llround(seconds));
    long h = total / 3600, m = (total % 3600) / 60, s = total % 60;
    char buf[32];
    if (h > 0) {
        std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", h, m, s);
    } else {
        std::snprintf(buf, sizeof buf, "%ld:%02ld", m, s);
    }
    return buf;
}

std::string formatRatio(double ratio) {
    if (!std::isfinite(ratio)) {
        return kDash;
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f\xC3\x97", ratio);  // ×
    return buf;
}

std::string formatPercent(double fraction, int decimals) {
    if (!std::isfinite(fraction)) {
        return kDash;
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.*f%%", decimals, fraction * 100.0);
    return buf;
}

std::string formatNumber(double value, int decimals) {
    if (!std::isfinite(value)) {
        return kDash;
    }
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
    return buf;
}

std::string formatSignificant(double value, int digits) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.*g", digits, value);
    return buf;
}

std::optional<int64_t> parseByteSize(const std::string& text) {
    size_t used = 0;
    double v = 0;
    try {
        v = std::stod(text, &used);
    } catch (...) {
        return std::nullopt;
    }
    std::string unit = text.substr(used);
    for (auto& c : unit) {
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    double mult = 1;
    if (unit.empty() || unit == "b") {
        mult = 1;
    } else if (unit == "k" || unit == "kb" || unit == "kib") {
        mult = 1024.0;
    } else if (unit == "m" || unit == "mb" || unit == "mib") {
        mult = 1024.0 * 1024.0;
    } else if (unit == "g" || unit == "gb" || unit == "gib") {
        mult = 1024.0 * 1024.0 * 1024.0;
    } else if (unit == "t" || unit == "tb" || unit == "tib") {
        mult = 1024.0 * 1024.0 * 1024.0 * 1024.0;
    } else {
        return std::nullopt;
    }
    if (!std::isfinite(v) || v < 0 || v * mult > 9.0e18) {
        return std::nullopt;
    }
    return static_cast<int64_t>(v * mult);
}

namespace {

/// The code point of the well-formed UTF-8 sequence of `len` bytes at `text[i]`.
uint32_t codePointAt(const std::string& text, size_t i, size_t len) {
    const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[i + k]); };
    if (len == 2) {
        return (byte(0) & 0x1Fu) << 6 | (byte(1) & 0x3Fu);
    }
    if (len == 3) {
        return (byte(0) & 0x0Fu) << 12 | (byte(1) & 0x3Fu) << 6 | (byte(2) & 0x3Fu);
    }
    return (byte(0) & 0x07u) << 18 | (byte(1) & 0x3Fu) << 12 | (byte(2) & 0x3Fu) << 6 |
           (byte(3) & 0x3Fu);
}

/// The bidirectional controls: a terminal that honours them reorders the rest of the
/// line (U+202E, the right-to-left override, shows "exe.txt" as "txt.exe").
bool isBidiControl(uint32_t c) {
    return c == 0x061C || c == 0x200E || c == 0x200F || (c >= 0x202A && c <= 0x202E) ||
           (c >= 0x2066 && c <= 0x2069);
}

}  // namespace

std::string printable(const std::string& text, bool keep_newlines) {
    std::string out;
    out.reserve(text.size());
    auto escape = [&out](unsigned char c) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\x%02X", c);
        out += buf;
    };
    auto byte = [&text](size_t i) {
        return i < text.size() ? static_cast<unsigned char>(text[i]) : 0;
    };
    size_t i = 0;
    while (i < text.size()) {
        const unsigned char c = byte(i);
        if (c < 0x80) {
            if ((c < 0x20 && !(keep_newlines && c == '\n') && c != '\t') || c == 0x7F) {
                escape(c);
            } else {
                out += static_cast<char>(c);
            }
            ++i;
            continue;
        }
        // One UTF-8 sequence, or a byte that starts none: a stray byte would let the
        // terminal decode what follows as something else (an 8-bit C1 control).
        const size_t len = util::utf8SequenceAt(text, i);
        if (len == 0) {
            escape(c);
            ++i;
        } else if (c == 0xC2 && byte(i + 1) <= 0x9F) {  // U+0080..U+009F, the C1 controls
            escape(byte(i + 1));
            i += 2;
        } else if (const uint32_t code = codePointAt(text, i, len); isBidiControl(code)) {
            char buf[12];
            std::snprintf(buf, sizeof buf, "\\u%04X", static_cast<unsigned>(code));
            out += buf;
            i += len;
        } else {
            out.append(text, i, len);
            i += len;
        }
    }
    return out;
}

size_t displayWidth(const std::string& text) {
    size_t n = 0;
    for (unsigned char c : text) {
        if ((c & 0xC0) != 0x80) {
            ++n;
        }
    }
    return n;
}

TextTable::TextTable(std::vector<std::string> header)
    : header_(std::move(header)), right_(header_.size(), false) {}

void TextTable::addRow(std::vector<std::string> cells) {
    cells.resize(header_.size());
    for (auto& cell : cells) {
        cell = printable(cell, false);
    }
    rows_.push_back(std::move(cells));
}

void TextTable::alignRight(std::vector<size_t> columns) {
    for (size_t c : columns) {
        if (c < right_.size()) {
            right_[c] = true;
        }
    }
}

std::string TextTable::render() const {
    std::vector<size_t> width(header_.size());
    for (size_t c = 0; c < header_.size(); ++c) {
        width[c] = displayWidth(header_[c]);
        for (const auto& r : rows_) {
            width[c] = std::max(width[c], displayWidth(r[c]));
        }
    }
    auto line = [&](const std::vector<std::string>& cells) {
        std::string out;
        for (size_t c = 0; c < cells.size(); ++c) {
            std::string pad(width[c] - displayWidth(cells[c]), ' ');
            out += right_[c] ? pad + cells[c] : cells[c] + pad;
            if (c + 1 < cells.size()) {
                out += "  ";
            }
        }
        while (!out.empty() && out.back() == ' ') {
            out.pop_back();
        }
        return out + "\n";
    };
    std::string out = line(header_);
    size_t total = 0;
    for (size_t w : width) {
        total += w;
    }
    total += 2 * (width.empty() ? 0 : width.size() - 1);
    std::string rule;
    for (size_t i = 0; i < total; ++i) {
        rule += "\xE2\x94\x80";  // ─
    }
    out += rule + "\n";
    for (const auto& r : rows_) {
        out += line(r);
    }
    return out;
}

std::string TextTable::renderTsv() const {
    auto line = [](const std::vector<std::string>& cells) {
        std::string out;
        for (size_t c = 0; c < cells.size(); ++c) {
            // Cells go to spreadsheets by the clipboard: no formulas, and no tab or
            // line break inside a cell.
            std::string cell = store::spreadsheetSafe(cells[c]);
            for (char& ch : cell) {
                if (ch == '\t' || ch == '\n' || ch == '\r')
                    ch = ' ';
            }
            out += cell;
            out += c + 1 < cells.size() ? "\t" : "\n";
        }
        return out;
    };
    std::string out = line(header_);
    for (const auto& r : rows_) {
        out += line(r);
    }
    return out;
}

}  // namespace ampbench::analysis
