// Which Linear layers an FP8 arm computes in FP8: from their shapes (auto), all of
// them, or the ones fp8_modules names; the plan's words for the run's first event.
#include "core/amp/Fp8Plan.h"

#include <fnmatch.h>
#include <torch/nn/modules/linear.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <string>

namespace ampbench::amp {

namespace {

std::string lower(std::string s) {
    for (char& c : s) {
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    return s;
}

std::string trimmed(const std::string& s) {
    const auto b = s.find_first_not_of(" \t");
    return b == std::string::npos ? std::string() : s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

/// The patterns of an fp8_modules text (';' or ',' between them).
std::vector<std::string> modulePatterns(const std::string& modules) {
    std::vector<std::string> out;
    std::string part;
    for (char c : modules + ";") {
        if (c == ';' || c == ',') {
            if (const auto t = trimmed(part); !t.empty()) {
                out.push_back(t);
            }
            part.clear();
        } else {
            part += c;
        }
    }
    return out;
}

/// A glob over the whole path, or a bare name (no dot, no wildcard) as the path's last
/// part: "fc1" names every blocks.N.fc1.
bool namesLayer(const std::string& pattern, const std::string& path) {
    if (pattern == path || ::fnmatch(pattern.c_str(), path.c_str(), 0) == 0) {
        return true;
    }
    if (pattern.find_first_of(".*?[") != std::string::npos) {
        return false;
    }
    const auto dot = path.rfind('.');
    return dot != std::string::npos && path.compare(dot + 1, std::string::npos, pattern) == 0;
}

/// "why not" for a layer the scaled matmul cannot take; empty where it can.
std::string shapeProblem(int64_t in, int64_t out) {
    auto why = [](int64_t n, const char* what) { return std::to_string(n) + " " + what; };
    if (out % 16 != 0) {
        return why(out, "outputs: not a multiple of 16");
    }
    if (in % 16 != 0) {
        return why(in, "inputs: not a multiple of 16");
    }
    return {};
}

std::string microseconds(double s) {
    char text[32];
    std::snprintf(text, sizeof text, "%.0f us", s * 1e6);
    return text;
}

/// The same path with every purely numeric part as '*' (blocks.3.fc1 -> blocks.*.fc1).
std::string blockPattern(const std::string& path) {
    std::string out, part;
    auto flush = [&] {
        const bool digits =
            !part.empty() && part.find_first_not_of("0123456789") == std::string::npos;
        out += digits ? "*" : part;
        part.clear();
    };
    for (char c : path) {
        if (c == '.') {
            flush();
            out += '.';
        } else {
            part += c;
        }
    }
    flush();
    return out;
}

}  // namespace

bool fp8ModulesAuto(const std::string& modules) {
    const auto t = lower(trimmed(modules));
    return t.empty() || t == "auto";
}

bool fp8ModulesAll(const std::string& modules) {
    return lower(trimmed(modules)) == "all";
}

int64_t linearRows(const config::ExperimentSpec& spec) {
    const int64_t rows = spec.micro_batch;
    return spec.model.name == "transformer" ? rows * spec.data.seq_len : rows;
}

Fp8LayerPlan weighFp8Layer(const std::string& path, int64_t in, int64_t out, int64_t rows,
                           const Fp8CostModel& costs) {
    Fp8LayerPlan p;
    p.path = path;
    p.in = in;
    p.out = out;
    p.why_not = shapeProblem(in, out);
    if (!p.why_not.empty()) {
        return p;
    }
    // Forward, input gradient and weight gradient: three matmuls of 2·M·K·N. The casts
    // read and write the input (M·K) and the output gradient (M·N), 2-byte values in
    // and out (the weight's cast takes the place of autocast's).
    const double m = static_cast<double>(rows), k = static_cast<double>(in),
                 n = static_cast<double>(out);
    p.saves_s = 3 * 2 * m * k * n * (1 / costs.bf16_flops - 1 / costs.fp8_flops);
    p.casts_s = 4 * (m * k + m * n) / costs.cast_bytes_per_s + costs.cast_fixed_s;
    if (p.saves_s <= p.casts_s) {
        p.why_not = "its casts, ~" + microseconds(p.casts_s) + ", outweigh the ~" +
                    microseconds(p.saves_s) + " FP8 saves on its matmuls at " +
                    std::to_string(rows) + " rows";
    }
    p.fp8 = p.why_not.empty();
    return p;
}

std::vector<Fp8LayerPlan> planFp8Layers(const models::Network& model, const std::string& modules,
                                        int64_t rows, const Fp8CostModel& costs) {
    const bool automatic = fp8ModulesAuto(modules) && rows > 0;
    const bool all = fp8ModulesAll(modules) || (fp8ModulesAuto(modules) && rows <= 0);
    const auto patterns = all || automatic ? std::vector<std::string>{} : modulePatterns(modules);
    std::vector<Fp8LayerPlan> out;
    for (const auto& item : model.named_modules("", /*include_self=*/false)) {
        const auto lin = std::dynamic_pointer_cast<torch::nn::LinearImpl>(item.value());
        if (!lin) {
            continue;
        }
        Fp8LayerPlan p;
        p.path = item.key();
        p.out = lin->weight.size(0);
        p.in = lin->weight.size(1);
        p.why_not = shapeProblem(p.in, p.out);
        if (!p.why_not.empty()) {
            // The scaled matmul cannot take it, whatever was asked.
        } else if (automatic) {
            p = weighFp8Layer(p.path, p.in, p.out, rows, costs);
        } else if (all) {
            if (std::min(p.in, p.out) < kFp8MinFeatures) {
                p.why_not = std::to_string(std::min(p.in, p.out)) +
                            (p.in < p.out ? " inputs" : " outputs") + ": under " +
                            std::to_string(kFp8MinFeatures) + ", too small to gain";
            }
        } else {
            const bool named = std::any_of(patterns.begin(), patterns.end(), [&](const auto& pat) {
                return namesLayer(pat, p.path);
            });
            if (!named) {
                p.why_not = "not in fp8_modules";
            }
        }
        p.fp8 = p.why_not.empty();
        out.push_back(std::move(p));
    }
    return out;
}

std::string unmatchedFp8Modules(const models::Network& model, const std::string& modules) {
    if (fp8ModulesAuto(modules) || fp8ModulesAll(modules)) {
        return {};
    }
    std::vector<std::string> layers;
    for (const auto& item : model.named_modules("", /*include_self=*/false)) {
        if (std::dynamic_pointer_cast<torch::nn::LinearImpl>(item.value())) {
            layers.push_back(item.key());
        }
    }
    std::string bad;
    for (const auto& pattern : modulePatterns(modules)) {
        if (std::none_of(layers.begin(), layers.end(),
                         [&](const auto& path) { return namesLayer(pattern, path); })) {
            bad += (bad.empty() ? "'" : ", '") + pattern + "'";
        }
    }
    if (bad.empty()) {
        return {};
    }
    if (layers.empty()) {
        return "fp8_modules " + bad + ": the model has no Linear layer FP8 can compute";
    }
    std::string some;
    std::vector<std::string> shown;
    for (const auto& path : layers) {
        const auto pattern = blockPattern(path);
        if (std::find(shown.begin(), shown.end(), pattern) == shown.end()) {
            shown.push_back(pattern);
            some += (some.empty() ? "" : ", ") + pattern;
        }
    }
    return "fp8_modules " + bad + " names no Linear layer; the model's are: " + some;
}

std::string describe(const std::vector<Fp8LayerPlan>& plan) {
    int64_t fp8 = 0;
    // Layers in bf16, those of the blocks with the same reason named once.
    std::vector<std::pair<std::string, std::string>> rest;  // (path or pattern, reason)
    for (const auto& p : plan) {
        if (p.fp8) {
            ++fp8;
            continue;
        }
        // A reason's numbers are the layer's shapes, the same in every block.
        const std::string pattern = blockPattern(p.path);
        auto same = std::find_if(rest.begin(), rest.end(), [&](const auto& r) {
            return r.second == p.why_not && blockPattern(r.first) == pattern;
        });
        if (same == rest.end()) {
            rest.emplace_back(p.path, p.why_not);
        } else {
            same->first = pattern;
        }
    }
    std::string text = std::to_string(fp8) + " of " + std::to_string(plan.size()) +
                       " Linear layers in FP8 (forward e4m3, gradients e5m2)";
    if (!rest.empty()) {
        text += "; in bf16: ";
        for (size_t i = 0; i < rest.size(); ++i) {
            text += (i ? "; " : "") + rest[i].first + " (" + rest[i].second + ")";
        }
    }
    return text;
}

}  // namespace ampbench::amp
