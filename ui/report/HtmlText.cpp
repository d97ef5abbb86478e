#include "ui/report/HtmlText.h"

#include <algorithm>

namespace ampbench::report::html {

std::string escape(const std::string& text) {
    std::string out;
    out.reserve(text.size());
    for (char c : text) {
        switch (c) {
            case '&':
                out += "&amp;";
                break;
            case '<':
                out += "&lt;";
                break;
            case '>':
                out += "&gt;";
                break;
            case '"':
                out += "&quot;";
                break;
            default:
                out += c;
        }
    }
    return out;
}

std::vector<Cell> cells(const std::vector<std::string>& texts) {
    std::vector<Cell> out;
    for (const auto& t : texts) {
        out.push_back({escape(t), {}, false});
    }
    return out;
}

std::string table(const std::vector<std::string>& header,
                  const std::vector<std::vector<Cell>>& rows, const std::vector<size_t>& numeric,
                  bool full_width, const std::vector<int>& widths) {
    auto isNumeric = [&](size_t i) {
        return std::find(numeric.begin(), numeric.end(), i) != numeric.end();
    };
    // border/cellspacing/cellpadding attributes: QTextDocument ignores most table CSS.
    std::string out = std::string("<table class=\"grid\"") + (full_width ? " width=\"100%\"" : "") +
                      " border=\"1\" cellspacing=\"0\" cellpadding=\"3\" "
                      "style=\"border-collapse:collapse; " +
                      kTableBorder + "\">\n";
    if (!header.empty()) {
        // <thead>: QTextDocument repeats the header row on every page a table spans.
        out += "<thead><tr>";
        for (size_t i = 0; i < header.size(); ++i) {
            // Its own text colour: on a dark desktop the text would inherit a light one.
            out += std::string("<th ") + kHeaderCell + (isNumeric(i) ? " align=\"right\"" : "") +
                   (i < widths.size() ? " width=\"" + std::to_string(widths[i]) + "%\"" : "") +
                   ">" + escape(header[i]) + "</th>";
        }
        out += "</tr></thead>\n";
    }
    for (const auto& row : rows) {
        out += "<tr>";
        for (size_t i = 0; i < row.size(); ++i) {
            const auto& c = row[i];
            const char* tag = c.header ? "th" : "td";
            const std::string& style = c.style;
            // "499 MiB" stays on one line. (QTextDocument mis-sizes columns with
            // white-space:nowrap.)
            std::string text = c.text;
            if (isNumeric(i)) {
                for (size_t at = text.find(' '); at != std::string::npos; at = text.find(' ', at)) {
                    text.replace(at, 1, "&nbsp;");
                }
            }
            out += std::string("<") + tag + (isNumeric(i) ? " align=\"right\"" : "") +
                   (c.header ? " align=\"left\"" : "") +
                   (style.empty() ? "" : " style=\"" + style + "\"") + ">" + text + "</" + tag +
                   ">";
        }
        out += "</tr>\n";
    }
    return out + "</table>\n";
}

std::string verdictColor(const std::string& verdict) {
    if (verdict == "aligned") {
        return "#2e7d32";
    }
    if (verdict == "within noise") {
        return "#558b2f";
    }
    if (verdict == "diverged") {
        return "#c62828";
    }
    if (verdict == "baseline") {
        return "#455a64";
    }
    if (verdict == "pending") {
        return "#3f51b5";  // waiting: no judgement, good or bad, yet
    }
    if (verdict == "cancelled") {
        return "#616161";
    }
    return "#b26a00";  // inconclusive
}

std::string badge(const std::string& verdict) {
    return "<span style=\"background-color:" + verdictColor(verdict) +
           "; color:#ffffff; font-weight:bold\">&nbsp;" + escape(verdict) + "&nbsp;</span>";
}

}  // namespace ampbench::report::html
