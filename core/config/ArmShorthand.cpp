#include "core/config/ArmShorthand.h"

#include <algorithm>
#include <sstream>
#include <vector>

#include "core/config/SpecFields.h"

namespace ampbench::config {
namespace {

std::string precisionList() {
    std::string out;
    for (const auto& name : enumChoices<Precision>()) {
        out += (out.empty() ? "" : ", ") + name;
    }
    return out;
}

std::vector<std::string> split(const std::string& s, char sep) {
    std::vector<std::string> out;
    std::stringstream in(s);
    std::string part;
    while (std::getline(in, part, sep)) {
        out.push_back(part);
    }
    return out;
}

bool parseDouble(const std::string& s, double& out) {
    try {
        size_t used = 0;
        out = std::stod(s, &used);
        return used == s.size();
    } catch (...) {
        return false;
    }
}

bool parseInt(const std::string& s, int64_t& out) {
    try {
        size_t used = 0;
        out = std::stoll(s, &used);
        return used == s.size();
    } catch (...) {
        return false;
    }
}

bool parseBool(const std::string& s, bool& out) {
    if (s == "1" || s == "true" || s == "on" || s == "yes") {
        out = true;
        return true;
    }
    if (s == "0" || s == "false" || s == "off" || s == "no") {
        out = false;
        return true;
    }
    return false;
}

}  // namespace

std::optional<ArmSpec> parseArmShorthand(const std::string& text, std::string& error) {
    auto eq = text.find('=');
    if (eq == std::string::npos || eq == 0) {
        error = "arm '" + text + "': expected NAME=PRECISION[,key=value...], e.g. amp4=amp,accum=4";
        return std::nullopt;
    }
    ArmSpec arm;
    arm.name = text.substr(0, eq);
    auto parts = split(text.substr(eq + 1), ',');
    if (parts.empty()) {
        error = "arm '" + arm.name + "': missing precision (" + precisionList() + ")";
        return std::nullopt;
    }
    auto p = precisionFromString(parts[0]);
    if (!p) {
        error = "arm '" + arm.name + "': unknown precision '" + parts[0] +
                "' (allowed: " + precisionList() + ")";
        return std::nullopt;
    }
    arm.precision = *p;
    std::vector<std::string> seen;
    for (size_t i = 1; i < parts.size(); ++i) {
        auto kv = parts[i].find('=');
        std::string key = parts[i].substr(0, kv);
        std::string value = kv == std::string::npos ? "1" : parts[i].substr(kv + 1);
        if (std::find(seen.begin(), seen.end(), key) != seen.end()) {
            error = "arm '" + arm.name + "': " + key + " is given more than once";
            return std::nullopt;
        }
        seen.push_back(key);
        const FlatField<ArmSpec>* field = nullptr;
        std::string keys;
        for (const auto& f : flatFields<ArmSpec>()) {
            if (f.info->shorthand) {
                keys += (keys.empty() ? "" : ", ") + std::string(f.info->shorthand);
                if (key == f.info->shorthand) {
                    field = &f;
                }
            }
        }
        if (!field && key.rfind("no", 0) == 0 && kv == std::string::npos) {
            // "noscale": a switch turned off.
            for (const auto& f : flatFields<ArmSpec>()) {
                if (f.info->shorthand && key.substr(2) == f.info->shorthand &&
                    f.kind == ValueKind::Bool) {
                    field = &f;
                    value = "0";
                }
            }
        }
        if (!field) {
            error = "arm '" + arm.name + "': unknown key '" + key + "' (allowed: " + keys + ")";
            return std::nullopt;
        }
        bool ok = true;
        switch (field->kind) {
            case ValueKind::Int: {
                int64_t v = 0;
                ok = parseInt(value, v);
                if (ok) {
                    field->set(arm, v);
                }
                break;
            }
            case ValueKind::Double: {
                double v = 0;
                ok = parseDouble(value, v);
                if (ok) {
                    field->set(arm, v);
                }
                break;
            }
            case ValueKind::Bool: {
                bool v = false;
                ok = parseBool(value, v);
                if (ok) {
                    field->set(arm, v);
                }
                break;
            }
            case ValueKind::Choice:
                ok = std::find(field->choices.begin(), field->choices.end(), value) !=
                     field->choices.end();
                if (ok) {
                    field->set(arm, value);
                }
                break;
            case ValueKind::Text:
                field->set(arm, value);
                break;
            case ValueKind::IntList:
            case ValueKind::DoubleList:
                ok = false;
                break;
        }
        if (!ok) {
            error = "arm '" + arm.name + "': bad value '" + value + "' for " + key;
            return std::nullopt;
        }
    }
    return arm;
}

}  // namespace ampbench::config
