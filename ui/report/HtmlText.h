#pragma once
// Small HTML-building helpers shared by the report sections. The markup stays
// within what both browsers and QTextDocument (the PDF path) render: tables with
// attributes, inline styles, no scripts.
#include <string>
#include <vector>

namespace ampbench::report::html {

std::string escape(const std::string& text);

/// One table cell; `style` is an inline CSS declaration list (may be empty).
struct Cell {
    std::string text;  ///< already HTML (escape plain text first)
    std::string style;
    bool header = false;
};

/// A table with a header row; `numeric` columns are right-aligned. `widths` (percent per
/// column, optional) fixes the columns of a full-width table: QTextDocument sizes many
/// columns poorly on its own.
std::string table(const std::vector<std::string>& header,
                  const std::vector<std::vector<Cell>>& rows,
                  const std::vector<size_t>& numeric = {}, bool full_width = true,
                  const std::vector<int>& widths = {});

/// Plain-text cells.
std::vector<Cell> cells(const std::vector<std::string>& texts);

/// The colour of a verdict badge (background) and its text.
std::string verdictColor(const std::string& verdict);

std::string badge(const std::string& verdict);

/// The attributes of every header cell the tables write: a light band with dark text,
/// for paper. A screen with a dark palette swaps them for its own (VerdictPanel).
inline constexpr const char* kHeaderCell = "bgcolor=\"#eef1f5\" style=\"color:#222222\"";
/// The tables' border colour, for paper. QTextDocument draws the lines between cells
/// in a lighter shade of it (white here), which a dark palette must swap too.
inline constexpr const char* kTableBorder = "border-color:#c8c8c8";

}  // namespace ampbench::report::html
