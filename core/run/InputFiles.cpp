#include "core/run/InputFiles.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>

namespace ampbench::run {
using nlohmann::json;
namespace {

std::string describeSize(const InputFile& f) {
    if (f.kind == "special") {
        return f.method;
    }
    std::string text;
    if (f.kind == "folder") {
        text = std::to_string(f.files) + " files, ";
    }
    text += std::to_string(f.bytes) + " bytes";
    if (!f.checksum.empty()) {
        text += ", " + describeChecksum(f);
    }
    return text;
}

}  // namespace

std::string describeChecksum(const InputFile& f) {
    std::string text = "CRC-32 " + f.checksum;
    if (f.method == "listing") {
        text += " of the listing";
    } else if (f.method == "sampled") {
        text += " of its size, time, header and sampled blocks";
    }
    return text;
}

std::string inputsToJson(const std::vector<InputFile>& inputs) {
    json list = json::array();
    for (const auto& f : inputs) {
        list.push_back({{"field", f.field},
                        {"path", f.path},
                        {"kind", f.kind},
                        {"method", f.method},
                        {"files", f.files},
                        {"bytes", f.bytes},
                        {"crc32", f.checksum}});
    }
    // Paths are bytes; JSON strings are UTF-8.
    return list.dump(-1, ' ', false, json::error_handler_t::replace);
}

namespace {

/// The record's fields and the JSON type each must have.
struct InputField {
    const char* key;
    bool text;  ///< a string; else a whole number
};
constexpr InputField kInputFields[] = {{"field", true},  {"path", true},   {"kind", true},
                                       {"method", true}, {"files", false}, {"bytes", false},
                                       {"crc32", true}};

std::string textOf(const json& j, const char* key) {
    const auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

int64_t wholeOf(const json& j, const char* key) {
    const auto it = j.find(key);
    return it != j.end() && it->is_number_integer() ? it->get<int64_t>() : 0;
}

}  // namespace

std::vector<InputFile> inputsFromJson(const std::string& text) {
    std::vector<InputFile> out;
    const json list = json::parse(text, nullptr, false);
    if (!list.is_array()) {
        return out;
    }
    for (const auto& j : list) {
        if (!j.is_object()) {
            continue;
        }
        InputFile f;
        f.field = textOf(j, "field");
        f.path = textOf(j, "path");
        f.kind = textOf(j, "kind");
        f.method = textOf(j, "method");
        f.files = wholeOf(j, "files");
        f.bytes = wholeOf(j, "bytes");
        f.checksum = textOf(j, "crc32");
        out.push_back(std::move(f));
    }
    return out;
}

std::string inputsProblem(const std::string& text) {
    if (text.empty()) {
        return {};
    }
    const json list = json::parse(text, nullptr, false);
    if (list.is_discarded()) {
        return " is not JSON";
    }
    if (!list.is_array()) {
        return std::string(" is a JSON ") + list.type_name() + ", not a list";
    }
    for (size_t i = 0; i < list.size(); ++i) {
        const std::string at = "[" + std::to_string(i) + "]";
        if (!list[i].is_object()) {
            return ": " + at + " is a JSON " + list[i].type_name() + ", not an object";
        }
        for (const InputField& f : kInputFields) {
            const auto it = list[i].find(f.key);
            if (it == list[i].end() || (f.text ? it->is_string() : it->is_number_integer())) {
                continue;
            }
            return ": " + at + "." + f.key + " = " +
                   it->dump(-1, ' ', false, json::error_handler_t::replace) + ": expected " +
                   (f.text ? "a string" : "a whole number");
        }
    }
    return {};
}

std::vector<std::string> inputDifferences(const std::vector<InputFile>& then,
                                          const std::vector<InputFile>& now) {
    std::vector<std::string> out;
    for (const auto& t : then) {
        auto n = std::find_if(now.begin(), now.end(),
                              [&](const InputFile& x) { return x.field == t.field; });
        if (n == now.end()) {
            out.push_back(t.field + " " + t.path +
                          " was read then but is not part of the spec now");
        } else if (n->kind == "special" && t.kind != "special") {
            out.push_back(t.field + " " + n->path + " is " + n->method + " now, not a file (" +
                          describeSize(t) + " then)");
        } else if (n->kind == "missing" && t.kind != "missing") {
            out.push_back(t.field + " " + n->path + " cannot be read now (" + describeSize(t) +
                          " then)");
        } else if (!(*n == t)) {
            std::string why = t.field + " " + n->path + " changed: " + describeSize(t) + " then; " +
                              describeSize(*n) + " now";
            if (n->path != t.path) {
                why += " (read from " + t.path + " then)";
            }
            out.push_back(why);
        }
    }
    for (const auto& n : now) {
        if (std::none_of(then.begin(), then.end(),
                         [&](const InputFile& x) { return x.field == n.field; })) {
            out.push_back(n.field + " " + n.path + " is read now but was not recorded then");
        }
    }
    return out;
}

}  // namespace ampbench::run
