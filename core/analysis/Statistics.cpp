#include "core/analysis/Statistics.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ampbench::analysis {
namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
}

double mean(const std::vector<double>& v) {
    if (v.empty()) {
        return kNaN;
    }
    double s = 0;
    for (double x : v) {
        s += x;
    }
    return s / static_cast<double>(v.size());
}

double stddev(const std::vector<double>& v) {
    if (v.size() < 2) {
        return kNaN;
    }
    double m = mean(v), s = 0;
    for (double x : v) {
        s += (x - m) * (x - m);
    }
    return std::sqrt(s / static_cast<double>(v.size() - 1));
}

double quantile(std::vector<double> v, double q) {
    if (v.empty()) {
        return kNaN;
    }
    double pos = std::clamp(q, 0.0, 1.0) * static_cast<double>(v.size() - 1);
    auto lo = static_cast<size_t>(std::floor(pos));
    auto hi = std::min(lo + 1, v.size() - 1);
    double frac = pos - static_cast<double>(lo);
    // Selection, not a full sort: linear in the run's length (the GUI summarizes
    // runs of 100k steps between two frames). Everything after lo is >= v[lo].
    const auto at = v.begin() + static_cast<std::ptrdiff_t>(lo);
    std::nth_element(v.begin(), at, v.end());
    const double low = *at;
    const double high = hi == lo ? low : *std::min_element(at + 1, v.end());
    return low + (high - low) * frac;
}

double median(std::vector<double> v) {
    return quantile(std::move(v), 0.5);
}

std::vector<double> ema(const std::vector<double>& v, double alpha) {
    std::vector<double> out(v.size());
    if (alpha <= 0) {
        return v;
    }
    double acc = 0, weight = 0;
    for (size_t i = 0; i < v.size(); ++i) {
        if (!std::isfinite(v[i])) {
            out[i] = v[i];
            continue;
        }
        acc = alpha * acc + (1 - alpha) * v[i];
        weight = alpha * weight + (1 - alpha);
        out[i] = acc / weight;
    }
    return out;
}

std::vector<double> resample(const std::vector<double>& x, const std::vector<double>& y,
                             const std::vector<double>& grid) {
    std::vector<double> out(grid.size(), kNaN);
    if (x.empty() || x.size() != y.size()) {
        return out;
    }
    size_t j = 0;
    for (size_t i = 0; i < grid.size(); ++i) {
        double g = grid[i];
        if (g < x.front() || g > x.back()) {
            continue;
        }
        while (j + 1 < x.size() && x[j + 1] < g) {
            ++j;
        }
        if (j + 1 >= x.size() || x[j] == g) {
            out[i] = y[j];
            continue;
        }
        double t = (g - x[j]) / (x[j + 1] - x[j]);
        out[i] = y[j] + t * (y[j + 1] - y[j]);
    }
    return out;
}

Interval medianInterval(std::vector<double> v, double confidence) {
    Interval r{kNaN, kNaN};
    if (v.empty()) {
        return r;
    }
    std::sort(v.begin(), v.end());
    const double n = static_cast<double>(v.size());
    // Normal approximation to the binomial order statistics around the median.
    const double z = confidence >= 0.99 ? 2.576 : (confidence >= 0.95 ? 1.96 : 1.645);
    double half = z * std::sqrt(n) / 2.0;
    auto lo = static_cast<long>(std::floor(n / 2.0 - half));
    auto hi = static_cast<long>(std::ceil(n / 2.0 + half));
    lo = std::clamp<long>(lo, 0, static_cast<long>(v.size()) - 1);
    hi = std::clamp<long>(hi, 0, static_cast<long>(v.size()) - 1);
    r.low = v[static_cast<size_t>(lo)];
    r.high = v[static_cast<size_t>(hi)];
    return r;
}

}  // namespace ampbench::analysis
