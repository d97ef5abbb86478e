// An advice as JSON: the report's "advice" section and `show -e ID --json`'s.
#include <cmath>
#include <nlohmann/json.hpp>

#include "core/analysis/Advice.h"
#include "core/config/SpecJson.h"

namespace ampbench::analysis {
namespace {

using nlohmann::json;

json real(double v) {
    return std::isfinite(v) ? json(v) : json(nullptr);
}

std::string statusName(RowStatus s) {
    switch (s) {
        case RowStatus::Ranked:
            return "ranked";
        case RowStatus::RuledOut:
            return "ruled_out";
        case RowStatus::NotMeasured:
            return "not_measured";
        case RowStatus::Unsupported:
            return "unsupported";
    }
    return "?";
}

std::string kindName(Recommendation k) {
    switch (k) {
        case Recommendation::Candidate:
            return "candidate";
        case Recommendation::Unchecked:
            return "unchecked";
        case Recommendation::KeepBaseline:
            return "keep_baseline";
        case Recommendation::Nothing:
            return "nothing";
    }
    return "?";
}

}  // namespace

json adviceJson(const Advice& a, const config::ExperimentSpec& spec) {
    json rows = json::array();
    for (const auto& r : a.rows) {
        const CandidateFigures& f = r.f;
        rows.push_back({{"arm", f.arm},
                        {"format", f.format},
                        {"micro_batch", f.micro_batch},
                        {"accumulation", f.accumulation},
                        {"checkpointing", f.checkpointing},
                        {"effective_batch", f.effective_batch},
                        {"lr", real(f.lr)},
                        {"status", statusName(r.status)},
                        {"rank", r.rank},
                        {"reason", reasonText(r, a.baseline)},
                        {"samples_per_s", real(f.samples_per_s)},
                        {"speed_ratio", real(r.speed_ratio)},
                        {"peak_bytes", f.peak_bytes},
                        {"memory_ratio", real(r.memory_ratio)},
                        {"user_step_ms", real(r.user_step_ms)},
                        {"max_batch", f.max_batch},
                        {"data_wait_share", real(f.data_share)},
                        {"checked", f.checked},
                        {"verdict", f.checked ? json(toString(f.verdict)) : json(nullptr)},
                        {"band_widths", real(f.band_units)},
                        {"skipped_steps", f.skipped}});
    }
    const AdviceRow* rec = a.recommendation();
    json out = {{"baseline", a.baseline},
                {"user_batch", a.user_batch},
                {"device", a.device},
                {"candidates", rows},
                {"not_for_model", a.not_for_model},
                {"quality_checked", a.quality_checked},
                {"recommendation",
                 {{"kind", kindName(a.kind)},
                  {"arm", rec ? json(rec->f.arm) : json(nullptr)},
                  {"sentence", recommendationText(a)},
                  {"pytorch", pytorchLines(a, spec)}}}};
    if (rec) {
        out["recommendation"]["spec"] = config::toJson(recommendedSpec(a, spec));
    }
    return out;
}

}  // namespace ampbench::analysis
