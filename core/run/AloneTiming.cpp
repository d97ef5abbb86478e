#include "core/run/AloneTiming.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

namespace ampbench::run {

namespace {

/// The median of `v` (NaN when empty); the analysis's own median is a layer above.
double medianOf(std::vector<double> v) {
    if (v.empty()) {
        return std::numeric_limits<double>::quiet_NaN();
    }
    const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
    std::nth_element(v.begin(), mid, v.end());
    const double upper = *mid;
    return v.size() % 2 ? upper : (upper + *std::max_element(v.begin(), mid)) / 2.0;
}

}  // namespace

double AloneTiming::msPerSample() const {
    std::vector<double> per;
    for (size_t i = 0; i < step_ms.size() && i < step_samples.size(); ++i) {
        if (step_ms[i] > 0 && step_samples[i] > 0) {
            per.push_back(step_ms[i] / static_cast<double>(step_samples[i]));
        }
    }
    return medianOf(std::move(per));
}

double AloneTiming::medianStepMs() const {
    return medianOf(step_ms);
}

EventRecord aloneTimingEvent(const AloneTiming& t) {
    nlohmann::json j = {{"mode", t.mode},
                        {"warmup_steps", t.warmup_steps},
                        {"step_ms", t.step_ms},
                        {"step_samples", t.step_samples},
                        {"peak_allocated", t.peak_allocated},
                        {"peak_reserved", t.peak_reserved}};
    if (std::isfinite(t.device_ms)) {
        j["device_ms"] = t.device_ms;
    }
    EventRecord e;
    e.step = 0;
    e.kind = EventKind::AloneTiming;
    e.message = j.dump();
    e.value = t.msPerSample();
    return e;
}

std::optional<AloneTiming> aloneTimingOf(const EventRecord& event) {
    if (event.kind != EventKind::AloneTiming) {
        return std::nullopt;
    }
    const auto j = nlohmann::json::parse(event.message, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object()) {
        return std::nullopt;
    }
    try {
        AloneTiming t;
        t.mode = j.at("mode").get<std::string>();
        if (t.mode != "graph" && t.mode != "eager") {
            return std::nullopt;
        }
        t.warmup_steps = j.value("warmup_steps", int64_t{0});
        t.step_ms = j.at("step_ms").get<std::vector<double>>();
        t.step_samples = j.at("step_samples").get<std::vector<int64_t>>();
        if (t.step_ms.size() != t.step_samples.size()) {
            return std::nullopt;
        }
        t.peak_allocated = j.value("peak_allocated", int64_t{0});
        t.peak_reserved = j.value("peak_reserved", int64_t{0});
        if (j.contains("device_ms") && j["device_ms"].is_number()) {
            t.device_ms = j["device_ms"].get<double>();
        }
        return t;
    } catch (const nlohmann::json::exception&) {
        return std::nullopt;
    }
}

}  // namespace ampbench::run
