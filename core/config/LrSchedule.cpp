#include "core/config/LrSchedule.h"

#include <algorithm>
#include <cmath>

namespace ampbench::config {
namespace {

constexpr double kPi = 3.14159265358979323846;

/// From `from` at pct 0 to `to` at pct 1 along a half cosine (PyTorch's _annealing_cos).
double cosineBetween(double from, double to, double pct) {
    return to + (from - to) / 2.0 * (1.0 + std::cos(kPi * pct));
}

double oneCycle(double max_lr, double pct_start, int64_t step, int64_t total) {
    const double initial = max_lr / 25.0;
    const double final_lr = initial / 1e4;
    const double peak_step = pct_start * static_cast<double>(total) - 1.0;
    const double last_step = static_cast<double>(total) - 1.0;
    const double t = static_cast<double>(step);
    if (t <= peak_step) {
        return cosineBetween(initial, max_lr, peak_step > 0 ? t / peak_step : 1.0);
    }
    const double span = last_step - peak_step;
    return cosineBetween(max_lr, final_lr, span > 0 ? (t - peak_step) / span : 1.0);
}

}  // namespace

double scheduledLr(const OptimizerSpec& o, double lr, int64_t step, int64_t total) {
    if (o.schedule == LrSchedule::Constant || total <= 0) {
        return lr;
    }
    step = std::clamp<int64_t>(step, 0, total - 1);
    if (o.schedule == LrSchedule::OneCycle) {
        return oneCycle(lr, o.warmup_fraction > 0 ? o.warmup_fraction : 0.3, step, total);
    }
    const auto warm =
        static_cast<int64_t>(std::floor(o.warmup_fraction * static_cast<double>(total)));
    if (step < warm) {
        return lr * static_cast<double>(step + 1) / static_cast<double>(warm);
    }
    const double progress = static_cast<double>(step) / static_cast<double>(total);
    switch (o.schedule) {
        case LrSchedule::Cosine: {
            const double span = static_cast<double>(total - warm);
            const double pct = span > 1 ? static_cast<double>(step - warm) / (span - 1) : 1.0;
            return cosineBetween(lr, lr * o.min_lr_fraction, pct);
        }
        case LrSchedule::Step:
            return lr * std::pow(o.gamma, std::floor(progress / o.step_fraction + 1e-12));
        default:
            return lr;
    }
}

}  // namespace ampbench::config
