#include "core/analysis/Health.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>

#include "core/analysis/Statistics.h"
#include "core/run/AloneTiming.h"

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

namespace {

/// A run's device time of one step against its median timed step.
struct Busy {
    double share = 0, device_ms = 0, step_ms = 0;
    bool from_eager_pass = false;  ///< the arm's eager pass alone, not the run itself
};

/// How busy the run kept the GPU, or nothing when it measured none.
std::optional<Busy> busyOf(const RunData& run) {
    double device_ms = kUnknown;
    for (const auto& ev : run.events) {
        if (ev.kind == run::EventKind::DeviceBusy && std::isfinite(ev.value) && ev.value > 0) {
            device_ms = ev.value;
        }
    }
    if (!std::isfinite(device_ms)) {
        // A packed run (fast verdict) measures nothing of its own: its arm's eager
        // pass alone on the GPU says how busy a plain run of it keeps the device.
        for (const auto& ev : run.events) {
            const auto pass = run::aloneTimingOf(ev);
            if (pass && pass->mode == "eager" && std::isfinite(pass->device_ms) &&
                pass->device_ms > 0 && !pass->step_ms.empty()) {
                const double step_ms = pass->medianStepMs();
                if (std::isfinite(step_ms) && step_ms > 0) {
                    return Busy{std::min(1.0, pass->device_ms / step_ms), pass->device_ms, step_ms,
                                true};
                }
            }
        }
        return std::nullopt;
    }
    std::vector<double> times;
    for (const auto& s : run.steps) {
        if (s.timed && s.step_ms > 0) {
            times.push_back(s.step_ms);
        }
    }
    const double step_ms = median(std::move(times));
    if (!std::isfinite(step_ms)) {
        return std::nullopt;
    }
    // Event times of a step and of its work alone differ by their noise: a share
    // just above 1 is a device that is never idle.
    return Busy{std::min(1.0, device_ms / step_ms), device_ms, step_ms, false};
}

/// The run's FP8 casts that saturated: counted, and the arm's first (earliest step,
/// then the largest share) kept.
void addSaturation(const RunData& run, Health& h) {
    const run::NumericsRecord* first = nullptr;
    for (const auto& r : run.numerics) {
        if (r.kind != run::NumericsKind::Cast) {
            continue;
        }
        ++h.recorded_casts;
        if (!(r.saturated > 0)) {
            continue;
        }
        ++h.saturated_casts;
        if (!first || r.step < first->step ||
            (r.step == first->step && r.saturated > first->saturated)) {
            first = &r;
        }
    }
    if (first && (!h.fp8_saturated || first->step < h.fp8_saturated->step)) {
        h.fp8_saturated = Health::Saturation{run.row.seed,  first->step,      first->name,
                                             first->format, first->saturated, first->scale};
    }
}

}  // namespace

Health armHealth(const std::vector<const RunData*>& runs) {
    Health h;
    double wait_ms = 0, step_ms = 0;
    std::vector<double> shares, device, steps;
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
        addSaturation(*run, h);
        if (const auto busy = busyOf(*run)) {
            shares.push_back(busy->share);
            device.push_back(busy->device_ms);
            steps.push_back(busy->step_ms);
            h.busy_from_eager_pass = h.busy_from_eager_pass || busy->from_eager_pass;
        }
    }
    if (!shares.empty()) {
        h.busy_runs = static_cast<int>(shares.size());
        h.device_busy_share = median(std::move(shares));
        h.device_ms = median(std::move(device));
        h.busy_step_ms = median(std::move(steps));
        h.launch_bound = h.device_busy_share < kLaunchBoundShare;
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
