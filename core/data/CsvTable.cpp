#include "core/data/private/CsvTable.h"

#include <ATen/ATen.h>
#include <csv.h>

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cfloat>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <system_error>

#include "core/data/DataError.h"
#include "core/run/InputFiles.h"

namespace ampbench::data {
namespace {

std::string trimmed(const std::string& s) {
    auto b = s.find_first_not_of(" \t\r");
    if (b == std::string::npos) {
        return {};
    }
    return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

/// A number in a cell, surrounding blanks and a leading '+' allowed. Locale-
/// independent: the GUI's process runs under the user's locale, where strtod may
/// want a decimal comma.
template <class T>
bool parseCell(const std::string& cell, T& out) {
    auto s = trimmed(cell);
    const char* b = s.data();
    const char* e = b + s.size();
    if (b != e && *b == '+') {
        ++b;
    }
    auto [end, ec] = std::from_chars(b, e, out);
    return b != e && ec == std::errc() && end == e;
}

bool parseNumber(const std::string& cell, double& out) {
    return parseCell(cell, out) && std::isfinite(out);
}

bool parseInteger(const std::string& cell, int64_t& out) {
    return parseCell(cell, out);
}

/// Training reads every value as float32: one beyond its range would become inf.
bool fitsFloat32(double v) {
    return std::fabs(v) <= static_cast<double>(FLT_MAX);
}

std::string outOfFloat32(const std::string& cell) {
    char max[32];
    std::snprintf(max, sizeof max, "%g", static_cast<double>(FLT_MAX));
    return "is " + trimmed(cell) + ", beyond float32 (the training dtype holds at most ±" + max +
           "; it would become inf)";
}

/// Collects libcsv's fields and rows. Its callbacks are C: nothing may throw
/// through them, so the first error is kept and rethrown after csv_parse returns.
class TableBuilder {
  public:
    TableBuilder(CsvTable& table, std::string label_column)
        : t_(table), label_column_(std::move(label_column)) {}

    static void onField(void* s, size_t len, void* self) {
        auto* b = static_cast<TableBuilder*>(self);
        if (b->error_) {
            return;
        }
        try {
            if (b->fields_.empty()) {
                b->row_line_ = b->line_;
            }
            b->fields_.emplace_back(static_cast<const char*>(s), len);
        } catch (...) {
            b->error_ = std::current_exception();
        }
    }
    static void onRow(int, void* self) {
        auto* b = static_cast<TableBuilder*>(self);
        if (b->error_) {
            return;
        }
        try {
            b->row();
        } catch (...) {
            b->error_ = std::current_exception();
        }
        b->fields_.clear();
    }

    void setLine(int64_t line) { line_ = line; }
    void rethrow() const {
        if (error_) {
            std::rethrow_exception(error_);
        }
    }
    std::vector<float>& values() { return values_; }

  private:
    std::string at() const { return t_.path + " line " + std::to_string(row_line_); }

    void row() {
        if (t_.columns.empty()) {
            header();
            return;
        }
        if (fields_.size() != t_.columns.size()) {
            throw DataError(at() + ": " + std::to_string(fields_.size()) +
                            " fields, but the header has " + std::to_string(t_.columns.size()) +
                            " columns");
        }
        for (size_t c = 0; c < fields_.size(); ++c) {
            if (c == t_.label) {
                t_.labels.push_back(trimmed(fields_[c]));
                if (t_.labels.back().empty()) {
                    throw DataError(at() + ": the label column '" + t_.columns[c] + "' is empty");
                }
                continue;
            }
            double v = 0;
            if (!parseNumber(fields_[c], v)) {
                throw DataError(at() + ": column '" + t_.columns[c] + "' is not a number ('" +
                                trimmed(fields_[c]) + "')");
            }
            if (!fitsFloat32(v)) {
                throw DataError(at() + ": column '" + t_.columns[c] + "' " +
                                outOfFloat32(fields_[c]));
            }
            values_.push_back(static_cast<float>(v));
        }
        t_.lines.push_back(row_line_);
    }

    void header() {
        for (const auto& f : fields_) {
            t_.columns.push_back(trimmed(f));
        }
        const auto& cols = t_.columns;
        if (cols.size() < 2) {
            throw DataError(t_.path + ": only one column ('" + cols.front() +
                            "'): expected feature columns and a label column");
        }
        if (label_column_.empty()) {
            t_.label = cols.size() - 1;
        } else if (auto it = std::find(cols.begin(), cols.end(), label_column_); it != cols.end()) {
            t_.label = static_cast<size_t>(it - cols.begin());
        } else if (int64_t i = 0; parseInteger(label_column_, i) && i >= 0 &&
                                  static_cast<size_t>(i) < cols.size()) {
            t_.label = static_cast<size_t>(i);
        } else {
            std::string names;
            for (const auto& c : cols) {
                names += (names.empty() ? "'" : ", '") + c + "'";
            }
            throw DataError(t_.path + ": data.label_column '" + label_column_ +
                            "' is neither a column's name nor an index from 0 to " +
                            std::to_string(cols.size() - 1) + " (columns: " + names + ")");
        }
    }

    CsvTable& t_;
    std::string label_column_;
    std::vector<std::string> fields_;
    std::vector<float> values_;
    int64_t line_ = 0, row_line_ = 0;
    std::exception_ptr error_;
};

}  // namespace

CsvTable readCsv(const std::string& path, const std::string& label_column) {
    std::string why;
    const int fd = run::openRegularFile(path, why);
    if (fd < 0) {
        throw DataError(why);
    }
    std::string text;
    const bool read = run::readRest(fd, path, text, why);
    ::close(fd);
    if (!read) {
        throw DataError(why);
    }
    if (text.rfind("\xEF\xBB\xBF", 0) == 0) {  // a UTF-8 byte order mark, as Excel writes
        text.erase(0, 3);
    }

    CsvTable table;
    table.path = path;
    TableBuilder builder(table, label_column);
    csv_parser parser{};
    if (csv_init(&parser, CSV_STRICT | CSV_STRICT_FINI) != 0) {
        throw DataError(path + ": the CSV parser could not start");
    }
    std::unique_ptr<csv_parser, void (*)(csv_parser*)> hold(&parser, csv_free);
    // Fed line by line, so that every row knows its line number.
    int64_t line = 0;
    for (size_t pos = 0; pos < text.size();) {
        auto end = text.find('\n', pos);
        end = end == std::string::npos ? text.size() : end + 1;
        builder.setLine(++line);
        auto used = csv_parse(&parser, text.data() + pos, end - pos, TableBuilder::onField,
                              TableBuilder::onRow, &builder);
        builder.rethrow();
        if (used != end - pos) {
            throw DataError(path + " line " + std::to_string(line) +
                            ": malformed quoting (a quote inside an unquoted field, or text "
                            "after a closing quote)");
        }
        pos = end;
    }
    if (csv_fini(&parser, TableBuilder::onField, TableBuilder::onRow, &builder) != 0) {
        throw DataError(path + " line " + std::to_string(line) +
                        ": a quoted field is not closed before the end of the file");
    }
    builder.rethrow();
    if (table.columns.empty()) {
        throw DataError(path + ": empty (expected a header row and one row per sample)");
    }
    if (table.labels.empty()) {
        throw DataError(path + ": no rows below the header");
    }
    auto n = static_cast<int64_t>(table.labels.size());
    table.features = at::tensor(builder.values(), at::kFloat).view({n, -1});
    return table;
}

CsvLabels csvLabels(const std::vector<const CsvTable*>& tables) {
    bool integers = true, numbers = true, words = true;
    const CsvTable* word_table = nullptr;  // where the first word is, for the message
    size_t word_row = 0;
    for (const auto* t : tables) {
        for (size_t r = 0; r < t->labels.size(); ++r) {
            int64_t i = 0;
            double v = 0;
            const bool is_int = parseInteger(t->labels[r], i);
            const bool is_number = is_int || parseNumber(t->labels[r], v);
            integers = integers && is_int;
            numbers = numbers && is_number;
            words = words && !is_number;
            if (!is_number && !word_table) {
                word_table = t;
                word_row = r;
            }
        }
    }
    CsvLabels out;
    if (integers) {
        for (const auto* t : tables) {
            std::vector<int64_t> v(t->labels.size());
            for (size_t r = 0; r < v.size(); ++r) {
                parseInteger(t->labels[r], v[r]);
                if (v[r] < 0) {
                    throw DataError(t->path + " line " + std::to_string(t->lines[r]) + ": label " +
                                    std::to_string(v[r]) +
                                    " is negative (class labels must be 0 or more)");
                }
            }
            out.targets.push_back(at::tensor(v, at::kLong));
        }
    } else if (numbers) {
        for (const auto* t : tables) {
            std::vector<float> v(t->labels.size());
            for (size_t r = 0; r < v.size(); ++r) {
                double d = 0;
                parseNumber(t->labels[r], d);
                if (!fitsFloat32(d)) {
                    throw DataError(t->path + " line " + std::to_string(t->lines[r]) +
                                    ": column '" + t->columns[t->label] + "' " +
                                    outOfFloat32(t->labels[r]));
                }
                v[r] = static_cast<float>(d);
            }
            out.targets.push_back(at::tensor(v, at::kFloat));
        }
    } else if (words) {
        std::map<std::string, int64_t> index;
        for (const auto* t : tables) {
            for (const auto& l : t->labels) {
                index.emplace(l, 0);
            }
        }
        for (auto& [name, i] : index) {
            i = static_cast<int64_t>(out.class_names.size());
            out.class_names.push_back(name);
        }
        for (const auto* t : tables) {
            std::vector<int64_t> v;
            for (const auto& l : t->labels) {
                v.push_back(index.at(l));
            }
            out.targets.push_back(at::tensor(v, at::kLong));
        }
    } else {
        const auto& t = *word_table;
        throw DataError(t.path + " line " + std::to_string(t.lines[word_row]) + ": column '" +
                        t.columns[t.label] + "' is not a number ('" + t.labels[word_row] +
                        "'), though other labels are");
    }
    return out;
}

}  // namespace ampbench::data
