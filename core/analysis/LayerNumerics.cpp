#include "core/analysis/LayerNumerics.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <tuple>

#include "core/analysis/Format.h"

namespace ampbench::analysis {

NumericsSummary summarizeNumerics(const std::vector<run::NumericsRecord>& rows) {
    NumericsSummary out;
    std::map<std::tuple<int, std::string>, size_t> index;  // (kind, name) → layer
    for (const auto& r : rows) {
        const auto key = std::make_tuple(static_cast<int>(r.kind), r.name);
        auto it = index.find(key);
        if (it == index.end()) {
            LayerNumerics l;
            l.name = r.name;
            l.kind = r.kind;
            l.dtype = r.dtype;
            l.numel = r.numel;
            l.min_headroom_log2 = INFINITY;
            it = index.emplace(key, out.layers.size()).first;
            out.layers.push_back(std::move(l));
        }
        LayerNumerics& l = out.layers[it->second];
        ++l.observations;
        l.max_underflow_subnormal = std::max(l.max_underflow_subnormal, r.underflow_subnormal);
        l.mean_underflow_subnormal += r.underflow_subnormal;
        l.max_underflow_normal = std::max(l.max_underflow_normal, r.underflow_normal);
        const double headroom = std::isnan(r.headroom_log2) ? -INFINITY : r.headroom_log2;
        if (l.min_headroom_step == 0 || headroom < l.min_headroom_log2) {
            l.min_headroom_log2 = headroom;
            l.min_headroom_step = r.step;
        }
        if (r.nonfinite > 0) {
            ++l.nonfinite_steps;
            if (l.first_nonfinite_step == 0 || r.step < l.first_nonfinite_step) {
                l.first_nonfinite_step = r.step;
            }
        }
        out.steps.push_back(r.step);
    }
    for (auto& l : out.layers) {
        l.mean_underflow_subnormal /= static_cast<double>(std::max<int64_t>(1, l.observations));
    }
    std::sort(out.layers.begin(), out.layers.end(), [](const auto& a, const auto& b) {
        return std::make_tuple(static_cast<int>(a.kind), a.name) <
               std::make_tuple(static_cast<int>(b.kind), b.name);
    });
    std::sort(out.steps.begin(), out.steps.end());
    out.steps.erase(std::unique(out.steps.begin(), out.steps.end()), out.steps.end());
    return out;
}

NumericsGrid numericsGrid(const std::vector<run::NumericsRecord>& rows) {
    NumericsGrid g;
    const auto summary = summarizeNumerics(rows);
    g.steps = summary.steps;
    std::map<std::tuple<int, std::string>, size_t> row_of;
    for (const auto& l : summary.layers) {
        row_of[std::make_tuple(static_cast<int>(l.kind), l.name)] = g.names.size();
        g.names.push_back(l.name + (l.kind == run::NumericsKind::Grad ? " (grad)" : " (output)"));
    }
    g.cells.assign(g.names.size(),
                   std::vector<const run::NumericsRecord*>(g.steps.size(), nullptr));
    for (const auto& r : rows) {
        const size_t row = row_of[std::make_tuple(static_cast<int>(r.kind), r.name)];
        const size_t col = static_cast<size_t>(
            std::lower_bound(g.steps.begin(), g.steps.end(), r.step) - g.steps.begin());
        g.cells[row][col] = &r;
    }
    return g;
}

double metricValue(const run::NumericsRecord& r, NumericsMetric metric) {
    switch (metric) {
        case NumericsMetric::UnderflowSubnormal:
            return r.underflow_subnormal;
        case NumericsMetric::UnderflowNormal:
            return r.underflow_normal;
        case NumericsMetric::Headroom:
            return r.headroom_log2;
    }
    return NAN;
}

std::string cellText(const NumericsGrid& grid, size_t row, size_t column) {
    if (row >= grid.names.size() || column >= grid.steps.size()) {
        return "";
    }
    std::string text = grid.names[row] + ", step " + std::to_string(grid.steps[column]);
    const run::NumericsRecord* r = grid.cells[row][column];
    if (!r) {
        return text + ": not observed";
    }
    char buf[160];
    std::snprintf(buf, sizeof buf, ": abs-max %.4g, %s values (%s)", r->absmax,
                  std::to_string(r->numel).c_str(), r->dtype.c_str());
    text += buf;
    text += "\n< 2^-24 " + formatPercent(r->underflow_subnormal, 2) + ", < 2^-14 " +
            formatPercent(r->underflow_normal, 2) + ", headroom " +
            formatHeadroom(r->headroom_log2);
    if (r->nonfinite > 0) {
        text += ", " + std::to_string(r->nonfinite) + " non-finite";
    }
    char scale[32];
    std::snprintf(scale, sizeof scale, "%g", r->loss_scale);
    return text + ", loss scale " + scale;
}

std::vector<RunNumerics> experimentNumerics(const ExperimentData& data) {
    std::vector<RunNumerics> out;
    for (const auto& r : data.runs) {
        if (!r.numerics.empty()) {
            out.push_back({r.row.id, r.row.arm, r.row.seed, summarizeNumerics(r.numerics)});
        }
    }
    return out;
}

std::vector<LayerNumerics> worstUnderflow(const NumericsSummary& summary, size_t n) {
    std::vector<LayerNumerics> out;
    for (const auto& l : summary.layers) {
        if (l.max_underflow_normal > 0) {
            out.push_back(l);
        }
    }
    std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
        return std::make_pair(a.max_underflow_subnormal, a.max_underflow_normal) >
               std::make_pair(b.max_underflow_subnormal, b.max_underflow_normal);
    });
    out.resize(std::min(n, out.size()));
    return out;
}

std::vector<LayerNumerics> leastHeadroom(const NumericsSummary& summary, size_t n) {
    std::vector<LayerNumerics> out = summary.layers;
    std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
        return a.min_headroom_log2 < b.min_headroom_log2;
    });
    out.resize(std::min(n, out.size()));
    return out;
}

std::string formatHeadroom(double log2) {
    if (std::isnan(log2) || log2 == -INFINITY) {
        return "none (non-finite)";
    }
    if (log2 == INFINITY) {
        return "\u221e (all zero)";
    }
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.1f", log2);
    return buf;
}

std::string worstLayersText(const NumericsSummary& summary, size_t n) {
    std::string out;
    auto label = [](const LayerNumerics& l) {
        return printable(l.name, false) +
               (l.kind == run::NumericsKind::Grad ? " (grad)" : " (output)");
    };
    const auto under = worstUnderflow(summary, n);
    if (under.empty()) {
        out += "no value under fp16's smallest normal at the loss scale in any observation\n";
    } else {
        TextTable t({"underflow", "< 2^-24 worst", "< 2^-24 mean", "< 2^-14 worst", "values"});
        for (const auto& l : under) {
            t.addRow({label(l), formatPercent(l.max_underflow_subnormal, 2),
                      formatPercent(l.mean_underflow_subnormal, 2),
                      formatPercent(l.max_underflow_normal, 2), std::to_string(l.numel)});
        }
        t.alignRight({1, 2, 3, 4});
        out += t.render();
    }
    TextTable h({"headroom", "log2(65504/absmax) least", "at step", "non-finite steps"});
    for (const auto& l : leastHeadroom(summary, n)) {
        h.addRow({label(l), formatHeadroom(l.min_headroom_log2),
                  std::to_string(l.min_headroom_step), std::to_string(l.nonfinite_steps)});
    }
    h.alignRight({1, 2, 3});
    out += "\n" + h.render();
    return out;
}

}  // namespace ampbench::analysis
