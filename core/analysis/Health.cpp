#include "core/analysis/Health.h"

#include <algorithm>
#include <cmath>

namespace ampbench::analysis {

std::string describeSteps(const std::vector<int64_t>& steps, size_t max_items) {
    std::string out;
    size_t items = 0;
    for (size_t i = 0; i < steps.size();) {
        size_t j = i;
        while (j + 1 < steps.size() && steps[j + 1] == steps[j] + 1) {
            ++j;
        }
        if (items == max_items) {
            out += ", \xE2\x80\xA6";  // ellipsis
            break;
        }
        if (!out.empty()) {
            out += ", ";
        }
        out += std::to_string(steps[i]);
        if (j > i) {
            out += "\xE2\x80\x93" + std::to_string(steps[j]);  // en dash
        }
        ++items;
        i = j + 1;
    }
    return out;
}

Health armHealth(const std::vector<const RunData*>& runs) {
    Health h;
    double wait_ms = 0, step_ms = 0;
    for (const auto* run : runs) {
        ++h.runs;
        h.steps += static_cast<int64_t>(run->steps.size());
        std::vector<int64_t> skipped_steps;
        int64_t streak = 0;
        const auto early_limit = static_cast<int64_t>(std::max<size_t>(1, run->steps.size() / 10));
        for (size_t i = 0; i < run->steps.size(); ++i) {
            const auto& s = run->steps[i];
            if (s.skipped) {
                skipped_steps.push_back(s.step);
                h.early_skipped += static_cast<int64_t>(i) < early_limit ? 1 : 0;
                ++streak;
                if (streak > h.longest_skip_run) {
                    h.longest_skip_run = streak;
                    h.longest_skip_start = s.step - streak + 1;
                }
            } else {
                streak = 0;
            }
            if (std::isfinite(s.loss_scale)) {
                h.scaler_active = h.scaler_active || s.loss_scale != 1.0;
                if (!(h.min_loss_scale <= s.loss_scale)) {
                    h.min_loss_scale = s.loss_scale;
                }
            }
            if (s.timed && s.step_ms > 0) {
                step_ms += s.step_ms;
                wait_ms += s.data_wait_ms;
            }
        }
        if (!run->steps.empty()) {
            const double last = run->steps.back().loss_scale;
            if (!(h.final_loss_scale <= last)) {
                h.final_loss_scale = last;
            }
        }
        h.skipped += static_cast<int64_t>(skipped_steps.size());
        if (!skipped_steps.empty()) {
            if (!h.skipped_where.empty()) {
                h.skipped_where += "; ";
            }
            h.skipped_where += "seed " + std::to_string(run->row.seed) + ": step" +
                               (skipped_steps.size() > 1 ? "s " : " ") +
                               describeSteps(skipped_steps);
        }
        for (const auto& ev : run->events) {
            h.nonfinite_events += ev.kind == run::EventKind::NonFinite ? 1 : 0;
            h.oom_events += ev.kind == run::EventKind::OutOfMemory ? 1 : 0;
            h.warning_events += ev.kind == run::EventKind::Warning ? 1 : 0;
            if (ev.kind == run::EventKind::Warning) {
                if (auto origin = run::overflowOriginFromMessage(ev.message)) {
                    h.overflow_origins.push_back({run->row.seed, *origin});
                }
            }
        }
        if (run->row.status == run::RunStatus::Failed) {
            h.failures.push_back({run->row.seed, run->row.failure, run->row.error});
        }
    }
    if (h.steps > 0) {
        h.skipped_share = static_cast<double>(h.skipped) / static_cast<double>(h.steps);
    }
    if (step_ms > 0) {
        h.data_wait_share = wait_ms / step_ms;
        h.input_bound = h.data_wait_share > kInputBoundShare;
    }
    return h;
}

}  // namespace ampbench::analysis
