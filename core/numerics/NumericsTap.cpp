#include "core/numerics/NumericsTap.h"

#include <ATen/ATen.h>
#include <fnmatch.h>

#include <algorithm>

namespace ampbench::numerics {

std::vector<std::string> splitPatterns(const std::string& text) {
    std::vector<std::string> out;
    std::string part;
    auto push = [&] {
        const auto b = part.find_first_not_of(" \t");
        const auto e = part.find_last_not_of(" \t");
        if (b != std::string::npos) {
            out.push_back(part.substr(b, e - b + 1));
        }
        part.clear();
    };
    for (char c : text) {
        if (c == ';' || c == ',') {
            push();
        } else {
            part += c;
        }
    }
    push();
    return out;
}

bool matchesPattern(const std::string& pattern, const std::string& path) {
    return pattern == path || ::fnmatch(pattern.c_str(), path.c_str(), 0) == 0;
}

std::string unmatchedPatterns(const std::vector<std::string>& patterns,
                              const std::vector<std::string>& points) {
    std::string bad;
    for (const auto& p : patterns) {
        const bool hit = std::any_of(points.begin(), points.end(), [&](const std::string& point) {
            return matchesPattern(p, point);
        });
        if (!hit) {
            bad += (bad.empty() ? "'" : ", '") + p + "'";
        }
    }
    if (bad.empty()) {
        return "";
    }
    std::string some;
    const size_t shown = std::min<size_t>(points.size(), 16);
    for (size_t i = 0; i < shown; ++i) {
        some += (i ? ", " : "") + points[i];
    }
    if (points.size() > shown) {
        some += ", ... (" + std::to_string(points.size()) + " in all)";
    }
    return "fp32_modules " + bad + " matches no module; the model's modules are: " + some;
}

NumericsTap::NumericsTap(std::vector<std::string> fp32_patterns, const run::NumberFormat& format)
    : patterns_(std::move(fp32_patterns)), format_(format) {}

bool NumericsTap::fp32(const std::string& path) const {
    if (patterns_.empty()) {
        return false;
    }
    auto it = fp32_cache_.find(path);
    if (it == fp32_cache_.end()) {
        const bool hit = std::any_of(patterns_.begin(), patterns_.end(),
                                     [&](const std::string& p) { return matchesPattern(p, path); });
        it = fp32_cache_.emplace(path, hit).first;
    }
    return it->second;
}

at::Tensor NumericsTap::output(const std::string& path, const at::Tensor& out) {
    if (observation_) {
        observation_->add(path, out);
    }
    if (!locating_ || !out.defined() || !out.is_floating_point()) {
        return out;
    }
    if (!first_output_ && !at::isfinite(out).all().item<bool>()) {
        first_output_ = Found{path, dtypeName(out.scalar_type())};
    }
    if (!out.requires_grad()) {
        return out;
    }
    // The hook fires in backward with the gradient of this output; the forward goes on
    // with a copy, so an in-place op after the module (ReLU) leaves the hooked tensor be.
    auto hooked = out;
    hooked.register_hook([this, path](const at::Tensor& grad) {
        if (!first_gradient_ && grad.defined() && !at::isfinite(grad).all().item<bool>()) {
            first_gradient_ = Found{path, dtypeName(grad.scalar_type())};
        }
    });
    return out.clone();
}

void NumericsTap::startLocating() {
    locating_ = true;
    first_output_.reset();
    first_gradient_.reset();
}

void NumericsTap::observe(int64_t step, double loss_scale) {
    observation_.emplace(run::NumericsKind::Activation, step, 1.0, loss_scale, format_);
}

void NumericsTap::observe(int64_t step, const at::Tensor& loss_scale) {
    observation_.emplace(run::NumericsKind::Activation, step, 1.0, 1.0, format_);
    observation_->useLossScale(loss_scale);
}

std::optional<Observation> NumericsTap::takeObservation() {
    std::optional<Observation> out = std::move(observation_);
    observation_.reset();
    return out;
}

}  // namespace ampbench::numerics
