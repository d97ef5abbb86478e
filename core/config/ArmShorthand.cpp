#include "core/config/ArmShorthand.h"

#include <algorithm>
#include <sstream>
#include <vector>

namespace ampbench::config {
namespace {

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

bool parseInt(const std::string& s, int& out) {
    try {
        size_t used = 0;
        out = std::stoi(s, &used);
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
        error = "arm '" + arm.name + "': missing precision (fp32, amp, amp-fp16, amp-bf16)";
        return std::nullopt;
    }
    auto p = precisionFromString(parts[0]);
    if (!p) {
        error = "arm '" + arm.name + "': unknown precision '" + parts[0] +
                "' (allowed: fp32, amp, amp-fp16, amp-bf16)";
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
        bool ok = true;
        if (key == "accum") {
            ok = parseInt(value, arm.accumulation);
        } else if (key == "lr") {
            auto r = lrRuleFromString(value);
            ok = r.has_value();
            if (ok) {
                arm.lr_rule = *r;
            }
        } else if (key == "clip") {
            ok = parseDouble(value, arm.grad_clip);
        } else if (key == "tf32") {
            ok = parseBool(value, arm.tf32);
        } else if (key == "channels_last") {
            ok = parseBool(value, arm.channels_last);
        } else if (key == "checkpoint") {
            ok = parseBool(value, arm.checkpointing);
        } else if (key == "graph") {
            ok = parseBool(value, arm.cuda_graph);
        } else if (key == "repeats") {
            ok = parseInt(value, arm.repeats);
        } else if (key == "init_scale") {
            ok = parseDouble(value, arm.scaler.init_scale);
        } else if (key == "growth_interval") {
            ok = parseInt(value, arm.scaler.growth_interval);
        } else {
            error = "arm '" + arm.name + "': unknown key '" + key +
                    "' (allowed: accum, lr, clip, tf32, channels_last, checkpoint, graph, repeats, "
                    "init_scale, growth_interval)";
            return std::nullopt;
        }
        if (!ok) {
            error = "arm '" + arm.name + "': bad value '" + value + "' for " + key;
            return std::nullopt;
        }
    }
    return arm;
}

}  // namespace ampbench::config
