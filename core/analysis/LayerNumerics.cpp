#include "core/analysis/LayerNumerics.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <tuple>

#include "core/analysis/Format.h"
#include "core/run/NumberFormat.h"

namespace ampbench::analysis {

namespace {

/// The format of that name; fp16 for a name this build does not know (it is shown as
/// it is wherever it is named).
run::NumberFormat formatNamed(const std::string& name) {
    return run::numberFormatNamed(name).value_or(run::kFp16);
}

std::string largestText(double largest) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", largest);
    return buf;
}

/// "fp16's largest, 65504"; a name this build does not know without a value.
std::string largestOf(const std::string& format) {
    const auto f = run::numberFormatNamed(format);
    return format + "'s largest" + (f ? ", " + largestText(f->largest) : std::string());
}

}  // namespace

const char* kindSuffix(run::NumericsKind kind) {
    switch (kind) {
        case run::NumericsKind::Grad:
            return " (grad)";
        case run::NumericsKind::Activation:
            return " (output)";
        case run::NumericsKind::Cast:
            return " (cast)";
    }
    return "";
}

std::string headroomTarget(const std::string& format) {
    return "headroom to " + largestOf(format);
}

std::vector<std::string> formatsOf(const NumericsSummary& summary) {
    std::vector<std::string> out;
    for (const auto& l : summary.layers) {
        if (std::find(out.begin(), out.end(), l.format) == out.end()) {
            out.push_back(l.format);
        }
    }
    return out;
}

std::string metricLabel(NumericsMetric metric, const std::vector<std::string>& formats) {
    const std::vector<std::string> names =
        formats.empty() ? std::vector<std::string>{"fp16"} : formats;
    auto each = [&](const auto& part) {
        std::string out;
        for (const auto& name : names) {
            out += (out.empty() ? "" : " / ") + part(name);
        }
        return out;
    };
    switch (metric) {
        case NumericsMetric::UnderflowSubnormal:
            return "share under " + each([](const std::string& f) {
                       return f + "'s smallest subnormal (" +
                              run::powerOfTwoText(formatNamed(f).smallest_subnormal) + ")";
                   });
        case NumericsMetric::UnderflowNormal:
            return "share under " + each([](const std::string& f) {
                       return f + "'s smallest normal (" +
                              run::powerOfTwoText(formatNamed(f).smallest_normal) + ")";
                   });
        case NumericsMetric::Headroom:
            return "headroom to " + each([](const std::string& f) { return largestOf(f); }) +
                   " (log2 largest/abs-max)";
        case NumericsMetric::Saturated:
            return "saturated share: past " +
                   each([](const std::string& f) { return largestOf(f); });
    }
    return "";
}

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
            l.format = r.format;
            l.min_headroom_log2 = INFINITY;
            it = index.emplace(key, out.layers.size()).first;
            out.layers.push_back(std::move(l));
        }
        LayerNumerics& l = out.layers[it->second];
        ++l.observations;
        l.format = r.format;
        l.max_underflow_subnormal = std::max(l.max_underflow_subnormal, r.underflow_subnormal);
        l.mean_underflow_subnormal += r.underflow_subnormal;
        l.max_underflow_normal = std::max(l.max_underflow_normal, r.underflow_normal);
        l.mean_underflow_normal += r.underflow_normal;
        l.max_saturated = std::max(l.max_saturated, r.saturated);
        l.mean_saturated += r.saturated;
        if (!(r.absmax <= l.max_absmax)) {
            l.max_absmax = r.absmax;  // inf and NaN win
        }
        l.last_scale = r.scale;  // a tensor's rows come by step, in either order read
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
        const double n = static_cast<double>(std::max<int64_t>(1, l.observations));
        l.mean_underflow_subnormal /= n;
        l.mean_underflow_normal /= n;
        l.mean_saturated /= n;
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
        g.names.push_back(l.name + kindSuffix(l.kind));
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
        case NumericsMetric::Saturated:
            return r.saturated;
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
    const run::NumberFormat f = formatNamed(r->format);
    text += "\n" + r->format + ": < " + run::powerOfTwoText(f.smallest_subnormal) + " " +
            formatPercent(r->underflow_subnormal, 2) + ", < " +
            run::powerOfTwoText(f.smallest_normal) + " " + formatPercent(r->underflow_normal, 2) +
            ", saturated " + formatPercent(r->saturated, 2) + ", headroom " +
            formatHeadroom(r->headroom_log2) + " (to " + largestText(f.largest) + ")";
    if (r->nonfinite > 0) {
        text += ", " + std::to_string(r->nonfinite) + " non-finite";
    }
    char scale[32];
    std::snprintf(scale, sizeof scale, "%g", r->loss_scale);
    text += std::string(", loss scale ") + scale;
    if (r->scale != 1.0) {
        std::snprintf(scale, sizeof scale, "%g", r->scale);
        text += std::string(", scale ") + scale;
    }
    return text;
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

std::vector<LayerNumerics> castTensors(const NumericsSummary& summary) {
    std::vector<LayerNumerics> out;
    for (const auto& l : summary.layers) {
        if (l.kind == run::NumericsKind::Cast) {
            out.push_back(l);
        }
    }
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
        return printable(l.name, false) + kindSuffix(l.kind);
    };
    // One format for every row: its limits head the columns; else each row says its own.
    const auto formats = formatsOf(summary);
    const bool one = formats.size() == 1;
    const run::NumberFormat f = formatNamed(one ? formats[0] : "fp16");
    const std::string sub = one ? "< " + run::powerOfTwoText(f.smallest_subnormal) : "< subnormal";
    const std::string normal = one ? "< " + run::powerOfTwoText(f.smallest_normal) : "< normal";
    const auto under = worstUnderflow(summary, n);
    if (under.empty()) {
        std::string all;
        for (const auto& name : formats) {
            all += (all.empty() ? "" : ", ") + name;
        }
        out += "no value under its format's smallest normal (" + (all.empty() ? "fp16" : all) +
               ") at the loss scale in any observation\n";
    } else {
        TextTable t({"underflow", "format", sub + " worst", sub + " mean", normal + " worst",
                     "saturated worst", "values"});
        for (const auto& l : under) {
            t.addRow({label(l), l.format, formatPercent(l.max_underflow_subnormal, 2),
                      formatPercent(l.mean_underflow_subnormal, 2),
                      formatPercent(l.max_underflow_normal, 2), formatPercent(l.max_saturated, 2),
                      std::to_string(l.numel)});
        }
        t.alignRight({2, 3, 4, 5, 6});
        out += t.render();
    }
    const std::string head =
        one ? "log2(" + largestText(f.largest) + "/absmax) least" : "log2(largest/absmax) least";
    TextTable h({"headroom", "to", head, "at step", "saturated worst", "non-finite steps"});
    for (const auto& l : leastHeadroom(summary, n)) {
        h.addRow({label(l), largestOf(l.format), formatHeadroom(l.min_headroom_log2),
                  std::to_string(l.min_headroom_step), formatPercent(l.max_saturated, 2),
                  std::to_string(l.nonfinite_steps)});
    }
    h.alignRight({2, 3, 4, 5});
    out += "\n" + h.render();
    const auto casts = castTensors(summary);
    if (!casts.empty()) {
        TextTable c({"cast", "format", "scale", "abs-max scaled", "saturated worst",
                     "< subnormal worst", "< normal worst"});
        for (const auto& l : casts) {
            char scale[32], amax[32];
            std::snprintf(scale, sizeof scale, "%g", l.last_scale);
            std::snprintf(amax, sizeof amax, "%.4g", l.max_absmax);
            c.addRow({printable(l.name, false), l.format, scale, amax,
                      formatPercent(l.max_saturated, 2),
                      formatPercent(l.max_underflow_subnormal, 2),
                      formatPercent(l.max_underflow_normal, 2)});
        }
        c.alignRight({2, 3, 4, 5, 6});
        out += "\n" + c.render();
    }
    return out;
}

}  // namespace ampbench::analysis
