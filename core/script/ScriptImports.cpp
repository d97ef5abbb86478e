// The import scan: the modules a training script imports, from its unindented import
// lines and its own modules one level down, for the set-up check.
#include "core/script/ScriptRun.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace ampbench::script {
namespace {

namespace fs = std::filesystem;

bool isIdentifier(const std::string& s) {
    if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) {
        return false;
    }
    return std::all_of(s.begin(), s.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
    });
}

std::string trimmed(const std::string& s) {
    const size_t b = s.find_first_not_of(" \t\r");
    if (b == std::string::npos) {
        return {};
    }
    return s.substr(b, s.find_last_not_of(" \t\r") + 1 - b);
}

/// The top-level package of a dotted name ("torch" of "torch.nn as nn"); empty for a
/// relative one or __future__.
std::string topLevel(const std::string& spec) {
    const std::string t = trimmed(spec);
    const std::string word = t.substr(0, t.find_first_of(" \t("));
    const std::string top = word.substr(0, word.find('.'));
    return isIdentifier(top) && top != "__future__" ? top : std::string();
}

/// The names one file's unindented import lines give.
std::vector<std::string> importsOf(const fs::path& path) {
    std::ifstream in(path);
    std::vector<std::string> out;
    std::string line;
    bool in_string = false;  // inside a triple-quoted string
    while (std::getline(in, line)) {
        while (!line.empty() && line.back() == '\\') {  // a continued line
            std::string more;
            line.pop_back();
            if (!std::getline(in, more)) {
                break;
            }
            line += " " + more;
        }
        size_t quotes = 0;
        for (const char* q : {"\"\"\"", "'''"}) {
            for (size_t at = line.find(q); at != std::string::npos; at = line.find(q, at + 3)) {
                ++quotes;
            }
        }
        const bool was_in_string = in_string;
        in_string = in_string != (quotes % 2 == 1);
        if (was_in_string) {
            continue;
        }
        const std::string code = line.substr(0, line.find('#'));
        if (code.rfind("import ", 0) == 0) {
            std::stringstream names(code.substr(7));
            for (std::string part; std::getline(names, part, ',');) {
                if (const std::string top = topLevel(part); !top.empty()) {
                    out.push_back(top);
                }
            }
        } else if (code.rfind("from ", 0) == 0 && code.find(" import") != std::string::npos) {
            if (const std::string top = topLevel(code.substr(5)); !top.empty()) {
                out.push_back(top);
            }
        }
    }
    return out;
}

}  // namespace

std::vector<std::string> scriptImports(const std::string& path) {
    std::vector<std::string> out;
    auto add = [&out](const std::vector<std::string>& names) {
        for (const auto& n : names) {
            if (std::find(out.begin(), out.end(), n) == out.end()) {
                out.push_back(n);
            }
        }
    };
    const std::vector<std::string> own = importsOf(path);
    add(own);
    const fs::path folder = fs::path(path).parent_path();
    std::error_code ec;
    for (const auto& name : own) {
        for (const fs::path& beside : {folder / (name + ".py"), folder / name / "__init__.py"}) {
            if (fs::is_regular_file(beside, ec)) {
                add(importsOf(beside));
            }
        }
    }
    return out;
}

}  // namespace ampbench::script
