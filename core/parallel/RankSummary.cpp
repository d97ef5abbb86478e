#include "core/parallel/RankSummary.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

namespace ampbench::parallel {

std::string toJson(const RankSummary& s) {
    nlohmann::json j;
    j["rank"] = s.rank;
    j["steps"] = s.steps;
    j["median_step_ms"] = std::isfinite(s.median_step_ms) ? s.median_step_ms : -1.0;
    j["max_step_ms"] = s.max_step_ms;
    j["peak_bytes"] = s.peak_bytes;
    j["data_wait_ms"] = s.data_wait_ms;
    return j.dump();
}

RankSummary rankSummaryFromJson(const std::string& text) {
    RankSummary s;
    const auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object()) {
        return s;
    }
    s.rank = j.value("rank", 0);
    s.steps = j.value("steps", int64_t{0});
    s.median_step_ms = j.value("median_step_ms", -1.0);
    if (s.median_step_ms < 0) {
        s.median_step_ms = NAN;
    }
    s.max_step_ms = j.value("max_step_ms", 0.0);
    s.peak_bytes = j.value("peak_bytes", int64_t{0});
    s.data_wait_ms = j.value("data_wait_ms", 0.0);
    return s;
}

std::string describe(const RankSummary& s) {
    char line[200];
    std::snprintf(
        line, sizeof line, "rank %d: median step %.2f ms (max %.2f), peak %.0f MiB, %lld steps",
        s.rank, s.median_step_ms, s.max_step_ms,
        static_cast<double>(s.peak_bytes) / (1024.0 * 1024.0), static_cast<long long>(s.steps));
    return line;
}

void RankSummaryObserver::onStep(const run::StepRecord& s) {
    summary_.steps = std::max(summary_.steps, s.step);
    summary_.peak_bytes = std::max(summary_.peak_bytes, s.mem_peak);
    summary_.data_wait_ms += s.data_wait_ms;
    if (s.timed) {
        step_ms_.push_back(s.step_ms);
        summary_.max_step_ms = std::max(summary_.max_step_ms, s.step_ms);
    }
}

RankSummary RankSummaryObserver::summary() const {
    RankSummary s = summary_;
    if (step_ms_.empty()) {
        s.median_step_ms = NAN;
        return s;
    }
    std::vector<double> v = step_ms_;
    const size_t mid = v.size() / 2;
    std::nth_element(v.begin(), v.begin() + static_cast<long>(mid), v.end());
    double m = v[mid];
    if (v.size() % 2 == 0) {
        m = (m + *std::max_element(v.begin(), v.begin() + static_cast<long>(mid))) / 2.0;
    }
    s.median_step_ms = m;
    return s;
}

}  // namespace ampbench::parallel
