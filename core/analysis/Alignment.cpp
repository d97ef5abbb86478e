#include "core/analysis/Alignment.h"

#include <algorithm>
#include <cmath>

#include "core/analysis/Statistics.h"

namespace ampbench::analysis {

std::vector<double> emaBySamples(const std::vector<double>& x, const std::vector<double>& y,
                                 double tau) {
    std::vector<double> out(y.size(), kUnknown);
    if (x.size() != y.size()) {
        return out;
    }
    if (!(tau > 0)) {
        return y;
    }
    double acc = 0, weight = 0, prev_x = 0;
    for (size_t i = 0; i < y.size(); ++i) {
        const double alpha = std::exp(-std::max(0.0, x[i] - prev_x) / tau);
        prev_x = x[i];
        if (!std::isfinite(y[i])) {
            out[i] = y[i];
            continue;
        }
        acc = alpha * acc + (1 - alpha) * y[i];
        weight = alpha * weight + (1 - alpha);
        out[i] = weight > 0 ? acc / weight : y[i];
    }
    return out;
}

RunCurve lossCurve(const RunData& run, double tau) {
    RunCurve c;
    c.run_id = run.row.id;
    c.arm = run.row.arm;
    c.seed = run.row.seed;
    for (const auto& s : run.steps) {
        c.x.push_back(static_cast<double>(s.samples));
        c.raw.push_back(s.loss);
    }
    c.smooth = emaBySamples(c.x, c.raw, tau);
    return c;
}

std::vector<double> commonGrid(const std::vector<const RunCurve*>& curves, size_t points) {
    double lo = -INFINITY, hi = INFINITY;
    for (const auto* c : curves) {
        if (c->x.empty()) {
            continue;
        }
        lo = std::max(lo, c->x.front());
        hi = std::min(hi, c->x.back());
    }
    if (!std::isfinite(lo) || !std::isfinite(hi) || hi <= lo || points < 2) {
        return {};
    }
    std::vector<double> grid(points);
    for (size_t i = 0; i < points; ++i) {
        grid[i] = lo + (hi - lo) * static_cast<double>(i) / static_cast<double>(points - 1);
    }
    return grid;
}

namespace {

std::vector<std::vector<double>> onGrid(const std::vector<const RunCurve*>& runs,
                                        const std::vector<double>& grid) {
    std::vector<std::vector<double>> out;
    for (const auto* r : runs) {
        out.push_back(resample(r->x, r->smooth, grid));
    }
    return out;
}

std::vector<double> column(const std::vector<std::vector<double>>& rows, size_t i) {
    std::vector<double> v;
    for (const auto& r : rows) {
        if (i < r.size() && std::isfinite(r[i])) {
            v.push_back(r[i]);
        }
    }
    return v;
}

double pearson(const std::vector<double>& a, const std::vector<double>& b) {
    if (a.size() < 3 || a.size() != b.size()) {
        return kUnknown;
    }
    const double ma = mean(a), mb = mean(b);
    double sab = 0, saa = 0, sbb = 0;
    for (size_t i = 0; i < a.size(); ++i) {
        sab += (a[i] - ma) * (b[i] - mb);
        saa += (a[i] - ma) * (a[i] - ma);
        sbb += (b[i] - mb) * (b[i] - mb);
    }
    if (!(saa > 0) || !(sbb > 0)) {
        return kUnknown;
    }
    return sab / std::sqrt(saa * sbb);
}

}  // namespace

std::vector<double> meanCurve(const std::vector<const RunCurve*>& runs,
                              const std::vector<double>& grid) {
    auto rows = onGrid(runs, grid);
    std::vector<double> out(grid.size(), kUnknown);
    for (size_t i = 0; i < grid.size(); ++i) {
        out[i] = mean(column(rows, i));
    }
    return out;
}

NoiseBand noiseBand(const std::vector<const RunCurve*>& baseline, const std::vector<double>& grid) {
    NoiseBand band;
    band.x = grid;
    band.seeds = static_cast<int>(baseline.size());
    auto rows = onGrid(baseline, grid);
    const size_t n = grid.size();
    band.mean.assign(n, kUnknown);
    band.sd.assign(n, kUnknown);
    band.low.assign(n, kUnknown);
    band.high.assign(n, kUnknown);
    band.min.assign(n, kUnknown);
    band.max.assign(n, kUnknown);
    std::vector<double> raw_sd(n, kUnknown);
    for (size_t i = 0; i < n; ++i) {
        auto v = column(rows, i);
        if (v.empty()) {
            continue;
        }
        band.mean[i] = mean(v);
        band.min[i] = *std::min_element(v.begin(), v.end());
        band.max[i] = *std::max_element(v.begin(), v.end());
        raw_sd[i] = stddev(v);
    }
    if (!band.known()) {
        return band;
    }
    std::vector<double> finite;
    for (double s : raw_sd) {
        if (std::isfinite(s)) {
            finite.push_back(s);
        }
    }
    const double typical = median(finite);
    for (size_t i = 0; i < n; ++i) {
        if (!std::isfinite(raw_sd[i])) {
            continue;
        }
        double floor = 0.25 * (std::isfinite(typical) ? typical : 0.0);
        floor = std::max(floor, 1e-3 * std::fabs(band.mean[i]));
        floor = std::max(floor, 1e-12);
        band.sd[i] = std::max(raw_sd[i], floor);
        band.low[i] = band.mean[i] - 2 * band.sd[i];
        band.high[i] = band.mean[i] + 2 * band.sd[i];
    }
    return band;
}

double slopeCorrelation(const std::vector<double>& a, const std::vector<double>& b) {
    std::vector<double> da, db;
    for (size_t i = 1; i < std::min(a.size(), b.size()); ++i) {
        const double sa = a[i] - a[i - 1], sb = b[i] - b[i - 1];
        if (std::isfinite(sa) && std::isfinite(sb)) {
            da.push_back(sa);
            db.push_back(sb);
        }
    }
    return pearson(da, db);
}

CurveDeviation compareCurves(const NoiseBand& band, const std::vector<double>& arm_mean,
                             double tail_fraction) {
    CurveDeviation d;
    const size_t n = std::min(band.x.size(), arm_mean.size());
    if (n == 0) {
        return d;
    }
    const auto tail_start = static_cast<size_t>(
        std::floor(static_cast<double>(n) * (1.0 - std::clamp(tail_fraction, 0.0, 1.0))));
    std::vector<double> units_all, units_tail, signed_tail, rel_all, rel_tail, gap_tail;
    int outside = 0, counted = 0;
    for (size_t i = 0; i < n; ++i) {
        const double base = band.mean[i], arm = arm_mean[i];
        if (!std::isfinite(base) || !std::isfinite(arm)) {
            continue;
        }
        const double gap = arm - base;
        const double rel = std::fabs(base) > 0 ? std::fabs(gap) / std::fabs(base) : kUnknown;
        rel_all.push_back(rel);
        if (i >= tail_start) {
            rel_tail.push_back(rel);
            gap_tail.push_back(gap);
        }
        if (band.known() && std::isfinite(band.sd[i])) {
            const double u = gap / (2 * band.sd[i]);
            units_all.push_back(std::fabs(u));
            ++counted;
            outside += std::fabs(u) > 1 ? 1 : 0;
            if (i >= tail_start) {
                units_tail.push_back(std::fabs(u));
                signed_tail.push_back(u);
            }
        }
    }
    d.relative_whole = mean(rel_all);
    d.relative_tail = mean(rel_tail);
    if (!units_all.empty()) {
        d.whole_mean_abs = mean(units_all);
        d.whole_max_abs = *std::max_element(units_all.begin(), units_all.end());
        d.outside_share = static_cast<double>(outside) / static_cast<double>(counted);
    }
    d.tail_mean_abs = mean(units_tail);
    d.tail_signed = mean(signed_tail);
    // The baseline's progress: first to last valid point of its mean curve.
    double first = kUnknown, last = kUnknown;
    for (size_t i = 0; i < n; ++i) {
        if (std::isfinite(band.mean[i])) {
            last = band.mean[i];
            first = std::isfinite(first) ? first : band.mean[i];
        }
    }
    const double drop = first - last;
    d.progress_lost = drop > 0 && !gap_tail.empty() ? mean(gap_tail) / drop : kUnknown;
    d.trend_r = slopeCorrelation(band.mean, arm_mean);
    return d;
}

FinalGap finalGap(std::string metric, std::vector<double> base, std::vector<double> arm,
                  double sd_floor) {
    FinalGap g;
    g.metric = std::move(metric);
    g.base = std::move(base);
    g.arm = std::move(arm);
    g.base_mean = mean(g.base);
    g.base_sd = stddev(g.base);
    g.arm_mean = mean(g.arm);
    g.arm_sd = stddev(g.arm);
    g.delta = g.arm_mean - g.base_mean;
    if (std::isfinite(g.base_sd)) {
        g.units = std::fabs(g.delta) / (2 * std::max(g.base_sd, sd_floor));
    }
    g.welch = welchTest(g.base, g.arm);
    g.significant = std::isfinite(g.units) && g.units > 1 && (!g.welch.valid || g.welch.p < 0.05);
    return g;
}

}  // namespace ampbench::analysis
